/** How a request ended, as the ledger records it. */
export const OUTCOMES = [
  'completed',
  'error',
  'client_aborted',
  'blocked',
  'rate_limited',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** One ledger row: what a request did and cost. Never any message content. */
export interface LedgerRow {
  /** Generated here, so a batch retried after an ambiguous failure is not counted twice. */
  rowId: string;
  createdAt: Date;
  requestId: string;
  keyId: string;
  /** The key's team at the time of the request (null: none, or a static key). */
  team: string | null;
  endpoint: string;
  method: string;
  modelRequested: string | null;
  model: string | null;
  provider: string | null;
  status: number;
  outcome: Outcome;
  stream: boolean;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  /** Pico-dollars (1e-12 USD). */
  costPico: bigint;
  /** True when usage never arrived (client gone) and the cost is the gateway's estimate. */
  costEstimated: boolean;
  /** Cost of protection judge calls, recorded apart from the request's own cost. */
  protectionCostPico: bigint;
  latencyMs: number;
  ttftMs: number | null;
  protections: string | null;
  errorCode: string | null;
  /** Answered from the response cache: no upstream call, no upstream tokens or cost. */
  cached: boolean;
}

export const USAGE_GROUPS = ['key', 'team', 'model', 'day', 'hour'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageFilter {
  from: Date;
  to: Date;
  keyId?: string;
  team?: string;
  model?: string;
}

/** Totals over a set of ledger rows; money in pico-dollars. */
export interface UsageTotals {
  group: string | null;
  requests: number;
  errors: number;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  costPico: bigint;
  estimatedCostPico: bigint;
  protectionCostPico: bigint;
}

/**
 * The sum of grouped totals: the overall totals of the same rows. Summing keeps the groups
 * and the totals of one answer consistent, which two queries could not (a ledger batch
 * may commit between them).
 */
export function sumTotals(rows: readonly UsageTotals[]): UsageTotals {
  const sum: UsageTotals = {
    group: null,
    requests: 0,
    errors: 0,
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    costPico: 0n,
    estimatedCostPico: 0n,
    protectionCostPico: 0n,
  };
  for (const r of rows) {
    sum.requests += r.requests;
    sum.errors += r.errors;
    sum.inputTokens += r.inputTokens;
    sum.cachedInputTokens += r.cachedInputTokens;
    sum.cacheWriteTokens += r.cacheWriteTokens;
    sum.outputTokens += r.outputTokens;
    sum.reasoningTokens += r.reasoningTokens;
    sum.costPico += r.costPico;
    sum.estimatedCostPico += r.estimatedCostPico;
    sum.protectionCostPico += r.protectionCostPico;
  }
  return sum;
}

/** A page of ledger rows, newest first. */
export interface LedgerPage {
  rows: (LedgerRow & { id: string })[];
  next?: string;
}

/** Spend per key since a period start, in pico-dollars. */
export interface SpendQuery {
  keyIds: string[];
  since: Date;
  includeProtections: boolean;
}

/** Storage of the ledger and its daily rollup. */
export interface UsageRepository {
  /** Inserts rows (ignoring ones already stored) and rolls them into the daily totals. */
  insert(rows: LedgerRow[]): Promise<void>;
  totals(filter: UsageFilter, group: UsageGroup | undefined): Promise<UsageTotals[]>;
  requests(filter: UsageFilter, limit: number, after?: string): Promise<LedgerPage>;
  spend(query: SpendQuery): Promise<Map<string, bigint>>;
  /** Deletes ledger rows older than `before` (the daily totals stay); returns how many. */
  prune(before: Date): Promise<number>;
}

export const USAGE_REPOSITORY = Symbol('USAGE_REPOSITORY');
