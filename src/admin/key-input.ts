import {
  BUDGET_PERIODS,
  type BudgetPeriod,
  KEY_ENDPOINTS,
  keyEndpointOf,
  type KeyEndpoint,
  globToRegExp,
  isGlob,
} from '../common/key-policy';
import { InvalidRequestError } from '../common/errors/gateway-errors';
import { own } from '../common/own';
import type { KeyChanges, StoredLimits } from '../keys/key-record';
import { usdToUnits } from '../common/money';

/** What the admin API needs to know about the catalog to check model patterns. */
export interface ModelIndex {
  exists(id: string): boolean;
  ids(): string[];
}

const CREATE_FIELDS = new Set([
  'name',
  'owner',
  'expires_at',
  'models',
  'endpoints',
  'limits',
  'budget',
  'metadata',
]);
const LIMIT_FIELDS = [
  'requests_per_minute',
  'tokens_per_minute',
  'max_concurrent_streams',
] as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const MAX_BUDGET_USD = 1e9;

function bad(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(`Invalid '${param}': ${message}`, param, 'invalid_value');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(v: unknown, param: string, max: number): string {
  if (typeof v !== 'string' || v.trim() === '' || v.length > max) {
    throw bad(param, `expected a non-empty string of at most ${max} characters.`);
  }
  return v;
}

/** An RFC 3339 time; `future` requires it to be after `now`. */
export function parseTime(v: unknown, param: string, now: number, future: boolean): Date {
  if (typeof v !== 'string' || !RFC3339.test(v) || Number.isNaN(Date.parse(v))) {
    throw bad(param, 'expected an RFC 3339 time such as 2030-01-31T00:00:00Z.');
  }
  const at = new Date(v);
  if (future && at.getTime() <= now) {
    throw bad(param, 'the time is in the past.');
  }
  return at;
}

function models(v: unknown, index: ModelIndex): string[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > 200) {
    throw bad('models', 'expected a non-empty array of model ids or glob patterns.');
  }
  return v.map((p, i) => {
    const param = `models[${i}]`;
    const pattern = text(p, param, 200);
    const matches = isGlob(pattern)
      ? index.ids().some((id) => globToRegExp(pattern).test(id))
      : index.exists(pattern);
    if (!matches) {
      throw bad(param, `'${pattern}' matches no model in the catalog.`);
    }
    return pattern;
  });
}

function endpoints(v: unknown): KeyEndpoint[] {
  if (!Array.isArray(v) || v.length === 0) {
    throw bad('endpoints', `expected a non-empty array of ${KEY_ENDPOINTS.join(', ')}.`);
  }
  return [
    ...new Set(
      v.map((e, i) => {
        // Older spellings ('chat.completions') are stored as the canonical name.
        const endpoint = keyEndpointOf(e);
        if (endpoint === undefined) {
          throw bad(`endpoints[${i}]`, `expected one of ${KEY_ENDPOINTS.join(', ')}.`);
        }
        return endpoint;
      }),
    ),
  ];
}

function limits(v: unknown): StoredLimits {
  if (v === null) {
    return {};
  }
  if (!isObject(v)) {
    throw bad('limits', `expected an object with ${LIMIT_FIELDS.join(', ')}.`);
  }
  const out: StoredLimits = {};
  for (const [field, value] of Object.entries(v)) {
    const param = `limits.${field}`;
    if (!LIMIT_FIELDS.includes(field as (typeof LIMIT_FIELDS)[number])) {
      throw bad(param, `unknown field; expected ${LIMIT_FIELDS.join(', ')}.`);
    }
    if (value === null) {
      continue;
    }
    if (!Number.isSafeInteger(value) || (value as number) < 0) {
      throw bad(param, 'expected a non-negative integer (0: unlimited).');
    }
    out[field as (typeof LIMIT_FIELDS)[number]] = value as number;
  }
  return out;
}

/** A budget body (`{"amount_usd", "period"}`); null clears. `param` names it in errors. */
export function parseBudget(
  v: unknown,
  param = 'budget',
): { amountMicros: bigint; period: BudgetPeriod } | null {
  if (v === null) {
    return null;
  }
  if (!isObject(v)) {
    throw bad(
      param || 'body',
      'expected {"amount_usd": number, "period": "day" | "month" | "total"}.',
    );
  }
  const prefix = param === '' ? '' : `${param}.`;
  for (const field of Object.keys(v)) {
    if (field !== 'amount_usd' && field !== 'period') {
      throw bad(`${prefix}${field}`, 'unknown field; expected amount_usd and period.');
    }
  }
  const amount = own(v, 'amount_usd');
  if (
    typeof amount !== 'number' ||
    !Number.isFinite(amount) ||
    amount < 0 ||
    amount > MAX_BUDGET_USD
  ) {
    throw bad(`${prefix}amount_usd`, `expected a number of dollars from 0 to ${MAX_BUDGET_USD}.`);
  }
  const period = own(v, 'period');
  if (!BUDGET_PERIODS.includes(period as BudgetPeriod)) {
    throw bad(`${prefix}period`, `expected one of ${BUDGET_PERIODS.join(', ')}.`);
  }
  return { amountMicros: usdToUnits(amount, 6), period: period as BudgetPeriod };
}

function metadata(v: unknown): Record<string, string> {
  if (!isObject(v)) {
    throw bad('metadata', 'expected an object of string values.');
  }
  const entries = Object.entries(v);
  if (entries.length > 50) {
    throw bad('metadata', 'at most 50 entries.');
  }
  const out: Record<string, string> = {};
  for (const [k, value] of entries) {
    if (k.length > 64 || typeof value !== 'string' || value.length > 512) {
      throw bad(`metadata.${k}`, 'expected a string of at most 512 characters (keys at most 64).');
    }
    Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Validates a create (`partial` false) or update (`partial` true) body into the changes
 * to store. Unknown fields, bad values, model patterns that match nothing and times in
 * the past are 400s naming the field.
 */
export function parseKeyBody(
  body: unknown,
  partial: boolean,
  index: ModelIndex,
  now: number,
): KeyChanges {
  if (!isObject(body)) {
    throw new InvalidRequestError('The body must be a JSON object.', null, 'invalid_value');
  }
  for (const field of Object.keys(body)) {
    if (!CREATE_FIELDS.has(field)) {
      throw bad(field, `unknown field; expected ${[...CREATE_FIELDS].join(', ')}.`);
    }
  }
  const changes: KeyChanges = {};
  const get = (field: string): unknown => own(body, field);
  if (get('name') !== undefined || !partial) {
    changes.name = text(get('name'), 'name', 200);
  }
  const nullable = <T>(field: string, parse: (v: unknown) => T): T | null | undefined => {
    const v = get(field);
    return v === undefined ? undefined : v === null ? null : parse(v);
  };
  changes.owner = nullable('owner', (v) => text(v, 'owner', 200));
  changes.expiresAt = nullable('expires_at', (v) => parseTime(v, 'expires_at', now, true));
  changes.models = nullable('models', (v) => models(v, index));
  changes.endpoints = nullable('endpoints', endpoints);
  const rawLimits = get('limits');
  changes.limits = rawLimits === undefined ? undefined : limits(rawLimits);
  const rawBudget = get('budget');
  changes.budget = rawBudget === undefined ? undefined : parseBudget(rawBudget);
  const rawMetadata = get('metadata');
  changes.metadata = rawMetadata === undefined ? undefined : metadata(rawMetadata);
  if (partial && Object.values(changes).every((v) => v === undefined)) {
    throw new InvalidRequestError(
      'Nothing to change: the body names no field.',
      null,
      'invalid_value',
    );
  }
  return changes;
}
