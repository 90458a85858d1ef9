import { type ApiKeyInfo, type BudgetPeriod, budgetWindow } from '../common/key-policy';
import { type ManagedKeyRecord, statusOf } from '../keys/key-record';
import { maskedSecret } from '../keys/key-secret';
import type { LedgerRow, UsageGroup, UsageTotals } from '../usage/ledger-row';
import { microsToUsd, picoToUsd } from '../common/money';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The period a key's spend is shown for: its budget's, else the calendar month. */
export function spendPeriodOf(key: ManagedKeyRecord): BudgetPeriod {
  return key.budget?.period ?? 'month';
}

/** A managed key as the admin API shows it: never the secret, only its hint. */
export function managedKeyView(
  key: ManagedKeyRecord,
  now: number,
  spentPico?: bigint,
): Record<string, unknown> {
  const newest = key.secrets[0];
  const period = spendPeriodOf(key);
  const window = budgetWindow(period, now);
  return {
    object: 'api_key',
    id: key.id,
    type: 'managed',
    name: key.name,
    owner: key.owner,
    status: statusOf(key, now),
    key_hint: newest ? maskedSecret(newest.prefix, newest.last4) : null,
    created_at: iso(key.createdAt),
    updated_at: iso(key.updatedAt),
    last_used_at: iso(key.lastUsedAt),
    expires_at: iso(key.expiresAt),
    revoked_at: iso(key.revokedAt),
    revoked_reason: key.revokedReason,
    models: key.models,
    endpoints: key.endpoints,
    limits: key.limits,
    budget: key.budget && {
      amount_usd: microsToUsd(key.budget.amountMicros),
      period: key.budget.period,
    },
    // Spend in the budget's own period (the window the budget check counts).
    spend:
      spentPico === undefined
        ? null
        : {
            period,
            spent_usd: picoToUsd(spentPico),
            since: new Date(window.start).toISOString(),
            resets_at:
              window.resetsAt === undefined ? null : new Date(window.resetsAt).toISOString(),
          },
    metadata: key.metadata,
    secrets: key.secrets.map((s) => ({
      key_hint: maskedSecret(s.prefix, s.last4),
      created_at: iso(s.createdAt),
      expires_at: iso(s.expiresAt),
    })),
  };
}

/** A key from GATEWAY_API_KEYS or the keys file: read-only, known only by its hash id. */
export function staticKeyView(info: ApiKeyInfo): Record<string, unknown> {
  return {
    object: 'api_key',
    id: info.id,
    type: 'static',
    name: info.name ?? null,
    owner: null,
    status: 'active',
    read_only: true,
    models: null,
    endpoints: null,
    limits: {
      requests_per_minute: info.limits.requestsPerMinute,
      tokens_per_minute: info.limits.tokensPerMinute,
      max_concurrent_streams: info.limits.maxConcurrentStreams,
    },
    budget: null,
    // Shown only when set: the keys file's `admin: true` (reaches unrecorded stored objects).
    ...(info.admin === true ? { admin: true } : {}),
  };
}

export function totalsView(t: UsageTotals, group?: UsageGroup): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  if (group !== undefined) {
    view[group === 'key' ? 'key_id' : group] = t.group;
  }
  return Object.assign(view, {
    requests: t.requests,
    errors: t.errors,
    input_tokens: t.inputTokens,
    cached_input_tokens: t.cachedInputTokens,
    cache_write_tokens: t.cacheWriteTokens,
    output_tokens: t.outputTokens,
    reasoning_tokens: t.reasoningTokens,
    cost_usd: picoToUsd(t.costPico),
    estimated_cost_usd: picoToUsd(t.estimatedCostPico),
    protection_cost_usd: picoToUsd(t.protectionCostPico),
  });
}

export function ledgerRowView(r: LedgerRow & { id: string }): Record<string, unknown> {
  return {
    id: r.id,
    created_at: r.createdAt.toISOString(),
    request_id: r.requestId,
    key_id: r.keyId,
    team: r.team,
    endpoint: r.endpoint,
    method: r.method,
    model_requested: r.modelRequested,
    model: r.model,
    provider: r.provider,
    status: r.status,
    outcome: r.outcome,
    stream: r.stream,
    input_tokens: r.inputTokens,
    cached_input_tokens: r.cachedInputTokens,
    cache_write_tokens: r.cacheWriteTokens,
    output_tokens: r.outputTokens,
    reasoning_tokens: r.reasoningTokens,
    cost_usd: picoToUsd(r.costPico),
    cost_estimated: r.costEstimated,
    protection_cost_usd: picoToUsd(r.protectionCostPico),
    latency_ms: r.latencyMs,
    ttft_ms: r.ttftMs,
    protections: r.protections,
    error_code: r.errorCode,
  };
}
