import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

/**
 * Versioned schema changes, applied in order at boot and by `npm run db:migrate`. Never
 * edit a migration that has shipped: add the next one. They live in code rather than in
 * a folder so that the compiled gateway needs no file lookup to find them.
 */
const MIGRATIONS: Record<string, Migration> = {
  '0001_keys_and_usage': {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`
        CREATE TABLE api_keys (
          id text PRIMARY KEY,
          name text NOT NULL,
          owner text,
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now(),
          last_used_at timestamptz,
          expires_at timestamptz,
          revoked_at timestamptz,
          revoked_reason text,
          models jsonb,
          endpoints jsonb,
          limits jsonb NOT NULL DEFAULT '{}',
          budget_micros bigint CHECK (budget_micros >= 0),
          budget_period text CHECK (budget_period IN ('day', 'month', 'total')),
          metadata jsonb NOT NULL DEFAULT '{}'
        )`.execute(db);
      await sql`CREATE INDEX api_keys_owner ON api_keys (owner, created_at)`.execute(db);
      await sql`
        CREATE TABLE api_key_secrets (
          hash text PRIMARY KEY,
          key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
          prefix text NOT NULL,
          last4 text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          expires_at timestamptz
        )`.execute(db);
      await sql`CREATE INDEX api_key_secrets_key ON api_key_secrets (key_id)`.execute(db);
      await sql`
        CREATE TABLE usage_ledger (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          row_id uuid NOT NULL UNIQUE,
          created_at timestamptz NOT NULL,
          request_id text NOT NULL,
          key_id text NOT NULL,
          endpoint text NOT NULL,
          method text NOT NULL,
          model_requested text,
          model text,
          provider text,
          status integer NOT NULL,
          outcome text NOT NULL,
          stream boolean NOT NULL,
          input_tokens integer NOT NULL,
          cached_input_tokens integer NOT NULL,
          cache_write_tokens integer NOT NULL,
          output_tokens integer NOT NULL,
          reasoning_tokens integer NOT NULL,
          cost_pusd bigint NOT NULL,
          cost_estimated boolean NOT NULL,
          protection_cost_pusd bigint NOT NULL,
          latency_ms integer NOT NULL,
          ttft_ms integer,
          protections text,
          error_code text
        )`.execute(db);
      await sql`CREATE INDEX usage_ledger_time ON usage_ledger (created_at)`.execute(db);
      await sql`CREATE INDEX usage_ledger_key_time ON usage_ledger (key_id, created_at)`.execute(
        db,
      );
      // Daily totals per key and model: what budgets read, and what outlives the ledger's
      // retention window.
      await sql`
        CREATE TABLE usage_daily (
          key_id text NOT NULL,
          day date NOT NULL,
          model text NOT NULL,
          requests bigint NOT NULL,
          errors bigint NOT NULL,
          input_tokens bigint NOT NULL,
          cached_input_tokens bigint NOT NULL,
          cache_write_tokens bigint NOT NULL,
          output_tokens bigint NOT NULL,
          reasoning_tokens bigint NOT NULL,
          cost_pusd bigint NOT NULL,
          protection_cost_pusd bigint NOT NULL,
          PRIMARY KEY (key_id, day, model)
        )`.execute(db);
    },
  },
  '0002_usage_team': {
    async up(db: Kysely<unknown>): Promise<void> {
      // The team a request was made for, recorded with it: a key's owner can change later,
      // and the spend stays with the team that made it (a join on api_keys would move it).
      await sql`ALTER TABLE usage_ledger ADD COLUMN team text`.execute(db);
      // Rows from before this column: the key's current team is the best knowledge there is.
      await sql`
        UPDATE usage_ledger AS u SET team = k.owner
        FROM api_keys AS k WHERE k.id = u.key_id AND k.owner IS NOT NULL`.execute(db);
      await sql`CREATE INDEX usage_ledger_team_time ON usage_ledger (team, created_at)`.execute(db);
    },
  },
  '0003_object_owners': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Who may see a server-side object whose id the gateway relayed (a stored response,
      // its items): the key that made it. No foreign key on key_id: static keys live in
      // files, not in api_keys, and a revoked key's objects stay refused, not reassigned.
      await sql`
        CREATE TABLE object_owners (
          id text PRIMARY KEY,
          kind text NOT NULL,
          parent_id text,
          key_id text NOT NULL,
          team text,
          provider text NOT NULL,
          model text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now()
        )`.execute(db);
      await sql`CREATE INDEX object_owners_parent ON object_owners (parent_id)`.execute(db);
    },
  },
  '0004_budget_reservations': {
    async up(db: Kysely<unknown>): Promise<void> {
      // What each budget (a key's or a team's) has spent and holds reserved in one period:
      // the row every replica's reservation updates atomically, so concurrent requests on
      // any number of replicas cannot reserve past the limit together.
      await sql`
        CREATE TABLE budget_counters (
          scope text NOT NULL CHECK (scope IN ('key', 'team')),
          scope_id text NOT NULL,
          period text NOT NULL CHECK (period IN ('day', 'month', 'total')),
          period_start timestamptz NOT NULL,
          spent_pusd bigint NOT NULL DEFAULT 0,
          reserved_pusd bigint NOT NULL DEFAULT 0,
          PRIMARY KEY (scope, scope_id, period, period_start)
        )`.execute(db);
      // One row per request and budget while its answer runs; one that outlives its expiry
      // (the replica crashed) is swept and stops counting.
      await sql`
        CREATE TABLE budget_reservations (
          id uuid NOT NULL,
          scope text NOT NULL,
          scope_id text NOT NULL,
          period text NOT NULL,
          period_start timestamptz NOT NULL,
          amount_pusd bigint NOT NULL CHECK (amount_pusd >= 0),
          expires_at timestamptz NOT NULL,
          PRIMARY KEY (id, scope)
        )`.execute(db);
      await sql`CREATE INDEX budget_reservations_expiry ON budget_reservations (expires_at)`.execute(
        db,
      );
      await sql`
        CREATE TABLE team_budgets (
          team text PRIMARY KEY,
          amount_micros bigint NOT NULL CHECK (amount_micros >= 0),
          period text NOT NULL CHECK (period IN ('day', 'month', 'total')),
          updated_at timestamptz NOT NULL DEFAULT now()
        )`.execute(db);
    },
  },
  '0005_sessions_and_audit': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Console sessions kept server-side, so that signing out, an admin ending them or a
      // role change takes effect on every replica. The cookie carries a random token; only
      // its SHA-256 is stored, so a database read does not yield a usable cookie.
      await sql`
        CREATE TABLE console_sessions (
          id text PRIMARY KEY,
          token_hash text NOT NULL UNIQUE,
          principal text NOT NULL,
          name text NOT NULL,
          role text NOT NULL CHECK (role IN ('admin', 'member')),
          team text,
          via text NOT NULL,
          grant_basis text NOT NULL,
          client text,
          created_at timestamptz NOT NULL,
          last_seen_at timestamptz NOT NULL,
          expires_at timestamptz NOT NULL,
          ended_at timestamptz,
          ended_reason text
        )`.execute(db);
      await sql`CREATE INDEX console_sessions_open ON console_sessions (principal) WHERE ended_at IS NULL`.execute(
        db,
      );
      await sql`CREATE INDEX console_sessions_expiry ON console_sessions (expires_at)`.execute(db);
      // Failed sign-ins per client address, shared by every replica.
      await sql`
        CREATE TABLE console_signin_throttle (
          client text PRIMARY KEY,
          failures integer NOT NULL,
          locked_until timestamptz,
          updated_at timestamptz NOT NULL
        )`.execute(db);
      await sql`
        CREATE TABLE audit_log (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          at timestamptz NOT NULL,
          actor_kind text NOT NULL,
          actor_id text,
          actor_name text,
          client text,
          action text NOT NULL,
          target_kind text,
          target_id text,
          team text,
          change jsonb,
          outcome text NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX audit_log_time ON audit_log (at DESC, id DESC)`.execute(db);
      await sql`CREATE INDEX audit_log_team_time ON audit_log (team, at DESC, id DESC)`.execute(db);
      await sql`CREATE INDEX audit_log_target ON audit_log (target_id)`.execute(db);
      // Append-only in the database itself, not only in the code: an UPDATE or TRUNCATE is
      // refused, and a DELETE only inside the retention sweeper's transaction, which sets
      // gateway.audit_sweep. (A role that owns the table can still drop the trigger; where
      // that matters, let the gateway's role only INSERT/SELECT/DELETE it: see the README.)
      await sql`
        CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'DELETE' AND current_setting('gateway.audit_sweep', true) = 'on' THEN
            RETURN OLD;
          END IF;
          RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP;
        END $$`.execute(db);
      await sql`
        CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
        FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`.execute(db);
      await sql`
        CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
        FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`.execute(db);
    },
  },
  '0006_usage_paging': {
    async up(db: Kysely<unknown>): Promise<void> {
      // The listing's order and cursor are (created_at, id): one index walk per page, ties
      // included. It covers everything the time-only index served, which goes.
      await sql`CREATE INDEX usage_ledger_time_id ON usage_ledger (created_at, id)`.execute(db);
      await sql`DROP INDEX usage_ledger_time`.execute(db);
    },
  },
  '0007_usage_cached': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Answers replayed by the response cache: no upstream call, recorded at no cost.
      await sql`ALTER TABLE usage_ledger ADD COLUMN cached boolean NOT NULL DEFAULT false`.execute(
        db,
      );
    },
  },
  '0008_stored_responses': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Responses API responses the gateway answered itself (models whose provider keeps no
      // state): what a later previous_response_id, item_reference or GET reads back. Owners
      // are in object_owners (kind stored_response); the JSON columns are text because
      // nothing queries inside them and a text write skips a jsonb parse.
      await sql`
        CREATE TABLE stored_responses (
          id text PRIMARY KEY,
          previous_id text,
          key_id text NOT NULL,
          team text,
          provider text NOT NULL,
          model text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          expires_at timestamptz NOT NULL,
          bytes integer NOT NULL,
          input_items text NOT NULL,
          response text NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX stored_responses_expiry ON stored_responses (expires_at)`.execute(db);
    },
  },
};

class InlineMigrations implements MigrationProvider {
  getMigrations(): Promise<Record<string, Migration>> {
    return Promise.resolve(MIGRATIONS);
  }
}

/**
 * Applies pending migrations. Kysely runs them in one transaction holding a PostgreSQL
 * advisory lock, so replicas booting at once apply each migration exactly once; the
 * others wait for the lock and then find nothing to do.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new InlineMigrations() });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(
      `database migration ${failed} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`,
      { cause: error },
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
