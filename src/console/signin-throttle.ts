import { sql } from 'kysely';
import type { OpenDatabase } from '../db/database';
import type { SigninThrottleConfig } from '../config/console.config';

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
  attempt(client: string): Promise<SigninAttempt> {
    const { maxFailures, lockoutSeconds, maxLockoutSeconds } = this.config;
    // The row lock (FOR UPDATE) serializes attempts from one address across replicas.
    return this.database.db.transaction().execute(async (trx) => {
      await sql`
        INSERT INTO console_signin_throttle (client, failures, updated_at)
        VALUES (${client}, 0, now()) ON CONFLICT (client) DO NOTHING`.execute(trx);
      const { rows } = await sql<{ failures: number; wait_ms: number | null }>`
        SELECT failures,
          CASE WHEN locked_until > now()
            THEN ceil(extract(epoch FROM locked_until - now()) * 1000)::float8 END AS wait_ms
        FROM console_signin_throttle WHERE client = ${client} FOR UPDATE`.execute(trx);
      const wait = rows[0]?.wait_ms;
      if (wait !== null && wait !== undefined) {
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(Number(wait) / 1000)) };
      }
      const failures = Number(rows[0]?.failures ?? 0) + 1;
      const lock =
        failures >= maxFailures
          ? Math.min(maxLockoutSeconds, lockoutSeconds * 2 ** Math.min(failures - maxFailures, 30))
          : null;
      await sql`
        UPDATE console_signin_throttle SET failures = ${failures}, updated_at = now(),
          locked_until = now() + make_interval(secs => ${lock}::float8)
        WHERE client = ${client}`.execute(trx);
      return { allowed: true };
    });
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
