import { sql } from 'kysely';
import type { OpenDatabase } from '../db/database';
import type { SigninThrottleConfig } from './console.config';

/** The outcome of asking to try a sign-in. */
export type SigninAttempt = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Failed console sign-ins per client address, in the database so that every replica
 * counts them together. Each attempt is counted before the secret is checked (a burst of
 * parallel guesses cannot slip past the count), and from the configured number on, each
 * one locks the address out for twice as long as the last, up to the maximum. A success
 * forgets the address.
 */
export class SigninThrottle {
  constructor(
    private readonly database: OpenDatabase,
    private readonly config: SigninThrottleConfig,
  ) {}

  /** Counts an attempt from `client`, or refuses it while the address is locked out. */
  async attempt(client: string): Promise<SigninAttempt> {
    const { maxFailures, lockoutSeconds, maxLockoutSeconds } = this.config;
    // One statement: the CTE locks the row and remembers whether it was locked before; the
    // upsert then counts the attempt only if it was not. Row locks serialize replicas.
    const { rows } = await sql<{ was_locked: Date | null; now: Date }>`
      WITH prev AS (
        SELECT locked_until FROM console_signin_throttle
        WHERE client = ${client} AND locked_until > now()
        FOR UPDATE
      )
      INSERT INTO console_signin_throttle AS t (client, failures, locked_until, updated_at)
      VALUES (${client}, 1, CASE WHEN ${maxFailures}::int <= 1
        THEN now() + make_interval(secs => ${lockoutSeconds}::int) END, now())
      ON CONFLICT (client) DO UPDATE SET
        failures = CASE WHEN t.locked_until > now() THEN t.failures ELSE t.failures + 1 END,
        locked_until = CASE
          WHEN t.locked_until > now() THEN t.locked_until
          WHEN t.failures + 1 >= ${maxFailures}::int THEN now() + make_interval(secs =>
            least(${maxLockoutSeconds}::float8,
              ${lockoutSeconds}::float8 * power(2, least(t.failures + 1 - ${maxFailures}::int, 30))))
          ELSE NULL END,
        updated_at = now()
      RETURNING (SELECT locked_until FROM prev) AS was_locked, now() AS now`.execute(
      this.database.db,
    );
    const wasLocked = rows[0]?.was_locked;
    if (wasLocked === null || wasLocked === undefined) {
      return { allowed: true };
    }
    const ms = new Date(wasLocked).getTime() - new Date(rows[0].now).getTime();
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) };
  }

  /** A sign-in from `client` succeeded: its failures are forgotten. */
  async succeeded(client: string): Promise<void> {
    await this.database.db
      .deleteFrom('console_signin_throttle')
      .where('client', '=', client)
      .execute();
  }

  /** Deletes rows of addresses that have been quiet longer than the longest lockout. */
  async prune(): Promise<void> {
    const before = new Date(
      Date.now() - Math.max(this.config.maxLockoutSeconds * 1000, 86_400_000),
    );
    await this.database.db
      .deleteFrom('console_signin_throttle')
      .where('updated_at', '<', before)
      .execute();
  }
}
