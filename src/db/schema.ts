import type { ColumnType, Generated } from 'kysely';

/**
 * Table types for Kysely. 64-bit integers travel as strings (or numbers from PGlite) and
 * are converted with `BigInt` by the repositories: money never passes through a float.
 */
type Int8 = ColumnType<string | number, string, string>;
type Json<T> = ColumnType<T, string, string>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface ApiKeysTable {
  id: string;
  name: string;
  owner: string | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: Timestamp;
  last_used_at: Timestamp | null;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  revoked_reason: string | null;
  models: Json<string[]> | null;
  endpoints: Json<string[]> | null;
  limits: Json<Record<string, number>>;
  budget_micros: Int8 | null;
  budget_period: string | null;
  metadata: Json<Record<string, string>>;
}

export interface ApiKeySecretsTable {
  hash: string;
  key_id: string;
  prefix: string;
  last4: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  expires_at: Timestamp | null;
}

export interface UsageLedgerTable {
  id: Generated<Int8>;
  row_id: string;
  created_at: Timestamp;
  request_id: string;
  key_id: string;
  endpoint: string;
  method: string;
  model_requested: string | null;
  model: string | null;
  provider: string | null;
  status: number;
  outcome: string;
  stream: boolean;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_pusd: Int8;
  cost_estimated: boolean;
  protection_cost_pusd: Int8;
  latency_ms: number;
  ttft_ms: number | null;
  protections: string | null;
  error_code: string | null;
  team: string | null;
  cached: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface UsageDailyTable {
  key_id: string;
  day: ColumnType<string, string, string>;
  model: string;
  requests: Int8;
  errors: Int8;
  input_tokens: Int8;
  cached_input_tokens: Int8;
  cache_write_tokens: Int8;
  output_tokens: Int8;
  reasoning_tokens: Int8;
  cost_pusd: Int8;
  protection_cost_pusd: Int8;
}

/** The owner of a server-side object the gateway relayed the id of (see src/ownership). */
export interface ObjectOwnersTable {
  id: string;
  kind: string;
  /** For an item: the response it belongs to (deleted with it). */
  parent_id: string | null;
  key_id: string;
  team: string | null;
  provider: string;
  model: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

/** A Responses API response the gateway stores itself (see formats/responses/store). */
export interface StoredResponsesTable {
  id: string;
  /** The response it continues (`previous_response_id`), for the chain. */
  previous_id: string | null;
  key_id: string;
  team: string | null;
  provider: string;
  model: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  expires_at: ColumnType<Date, Date | string, never>;
  /** Length of the two JSON texts, for the chain's size bound. */
  bytes: number;
  /** JSON array: the request's own input items, with ids. */
  input_items: string;
  /** JSON: the response object, reasoning payloads included. */
  response: string;
}

export interface ConsoleSessionsTable {
  id: string;
  token_hash: string;
  /** Stable identity: `token`, `link`, or `oidc:<sub>`. */
  principal: string;
  name: string;
  role: 'admin' | 'member';
  team: string | null;
  via: string;
  /** Why the role was granted (`email:<addr>`, `group:<g>`, `token:<fingerprint>`, ...). */
  grant_basis: string;
  client: string | null;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  ended_at: Timestamp | null;
  ended_reason: string | null;
}

export interface ConsoleSigninThrottleTable {
  client: string;
  failures: number;
  locked_until: Timestamp | null;
  updated_at: Timestamp;
}

export interface AuditLogTable {
  id: Generated<Int8>;
  at: Timestamp;
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  client: string | null;
  action: string;
  target_kind: string | null;
  target_id: string | null;
  team: string | null;
  change: Json<Record<string, unknown>> | null;
  outcome: string;
}

export interface BudgetCountersTable {
  scope: string;
  scope_id: string;
  period: string;
  period_start: Timestamp;
  spent_pusd: Int8;
  reserved_pusd: Int8;
}

export interface BudgetReservationsTable {
  id: string;
  scope: string;
  scope_id: string;
  period: string;
  period_start: Timestamp;
  amount_pusd: Int8;
  expires_at: Timestamp;
}

export interface TeamBudgetsTable {
  team: string;
  amount_micros: Int8;
  period: string;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface Database {
  api_keys: ApiKeysTable;
  api_key_secrets: ApiKeySecretsTable;
  usage_ledger: UsageLedgerTable;
  usage_daily: UsageDailyTable;
  object_owners: ObjectOwnersTable;
  stored_responses: StoredResponsesTable;
  console_sessions: ConsoleSessionsTable;
  console_signin_throttle: ConsoleSigninThrottleTable;
  audit_log: AuditLogTable;
  budget_counters: BudgetCountersTable;
  budget_reservations: BudgetReservationsTable;
  team_budgets: TeamBudgetsTable;
}
