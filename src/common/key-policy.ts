/**
 * What a client key may do beyond rate limits: which models and endpoints it may use, and
 * what it may spend. Pure data and matching, no storage: the key store fills it in, the
 * auth guard and the limits read it.
 */
import type { RateLimits } from '../config/limits.config';

/**
 * Endpoint names a key can be scoped to: the wire formats' own names (as in the catalog's
 * `endpoints` and each format's descriptor).
 */
export const KEY_ENDPOINTS = ['chat_completions', 'responses', 'messages'] as const;
export type KeyEndpoint = (typeof KEY_ENDPOINTS)[number];

/** Older spellings still accepted in key scopes, read as their canonical name. */
const KEY_ENDPOINT_ALIASES: ReadonlyMap<string, KeyEndpoint> = new Map([
  ['chat.completions', 'chat_completions'],
]);

/** The canonical endpoint name of `name` (an alias included); undefined when it names none. */
export function keyEndpointOf(name: unknown): KeyEndpoint | undefined {
  if (typeof name !== 'string') {
    return undefined;
  }
  if ((KEY_ENDPOINTS as readonly string[]).includes(name)) {
    return name as KeyEndpoint;
  }
  return KEY_ENDPOINT_ALIASES.get(name);
}

export const BUDGET_PERIODS = ['day', 'month', 'total'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** A spending cap in micro-dollars (integer: money never goes through a float). */
export interface KeyBudget {
  amountMicros: bigint;
  period: BudgetPeriod;
}

/**
 * A request path as the router matched it: express routes ignore letter case and a
 * trailing slash, so `/V1/Chat/Completions/` reaches the chat handler. Whatever classifies
 * a path (scopes, the ledger, error envelopes) must read it the same way, or such a variant
 * would pass a scope check and go unbilled.
 */
export function routedPath(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.replace(/\/+$/, '') || '/' : lower;
}

/** The scoped endpoint a request path belongs to; undefined for paths every key may use. */
export function endpointOfPath(raw: string): KeyEndpoint | undefined {
  const path = routedPath(raw);
  if (path === '/v1/chat/completions') {
    return 'chat_completions';
  }
  if (path === '/v1/responses' || path.startsWith('/v1/responses/')) {
    return 'responses';
  }
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) {
    return 'messages';
  }
  return undefined;
}

/** `claude-*` style pattern: `*` any run of characters, `?` one; everything else literal. */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}

export function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/** The models a key may use: exact ids and glob patterns. */
export class ModelScope {
  private readonly exact = new Set<string>();
  private readonly globs: RegExp[] = [];

  constructor(readonly patterns: readonly string[]) {
    for (const p of patterns) {
      if (isGlob(p)) {
        this.globs.push(globToRegExp(p));
      } else {
        this.exact.add(p);
      }
    }
  }

  allows(model: string): boolean {
    return this.exact.has(model) || this.globs.some((g) => g.test(model));
  }
}

/** Restrictions of a key; an absent field means no restriction. */
export interface KeyScope {
  models?: ModelScope;
  endpoints?: ReadonlySet<KeyEndpoint>;
}

/**
 * Whether a key may use the catalog model `model`: only a model scope restricts it. The one
 * place this is decided, so that /v1/models, admission and fallbacks agree; an absent key
 * (an unauthenticated route) is not restricted here, the AuthGuard refuses it.
 */
export function keyMayUseModel(key: { scope?: KeyScope } | undefined, model: string): boolean {
  const models = key?.scope?.models;
  return models === undefined || models.allows(model);
}

/** Start of the budget period containing `now` (UTC), and when the next one starts. */
export function budgetWindow(
  period: BudgetPeriod,
  now: number,
): { start: number; resetsAt: number | undefined } {
  const d = new Date(now);
  switch (period) {
    case 'day': {
      const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      return { start, resetsAt: start + 86_400_000 };
    }
    case 'month':
      return {
        start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
        resetsAt: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
      };
    case 'total':
      return { start: 0, resetsAt: undefined };
  }
}

/** Limits as configured: absent fields fall back to the next level (file defaults, env). */
export type LimitOverrides = Partial<RateLimits>;

/** What the gateway knows about an accepted client key. */
export interface ApiKeyInfo {
  /** Stable, non-reversible identifier (first 12 hex chars of the SHA-256). */
  id: string;
  /**
   * Label for people reading logs, the console and usage: the keys file's `name`, else
   * where the key is configured (`GATEWAY_API_KEYS #2`, its `key_env` variable, the
   * development key). Never the key itself.
   */
  name?: string;
  /** Rate-limit overrides of this key; absent fields use the environment defaults. */
  limits: LimitOverrides;
  /** Limits per model for this key, counted apart from (and on top of) `limits`. */
  modelLimits: ReadonlyMap<string, LimitOverrides>;
  /** `static`: GATEWAY_API_KEYS or the keys file; `managed`: the admin API (absent: static). */
  source?: 'static' | 'managed';
  /** Models and endpoints the key may use; absent: all of them. */
  scope?: KeyScope;
  /** Spending cap per period; absent: none. */
  budget?: KeyBudget;
  /** Epoch milliseconds after which the key is refused as expired. */
  expiresAt?: number;
  /** The managed key's team (its `owner`); static keys have none. */
  team?: string;
  /**
   * Set by `admin: true` in the keys file (never for managed keys): the key may reach
   * stored objects the gateway has no owner record of, e.g. responses made before owners
   * were recorded. It gives no access to objects recorded for another key.
   */
  admin?: boolean;
}
