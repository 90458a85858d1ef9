import { Logger } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';
import type { KeyBudget, BudgetPeriod } from '../common/key-policy';
import type { DbEvents } from '../db/events';
import type { Database } from '../db/schema';

/** Backstop: the team budgets are re-read this often even if no notification arrives. */
const REFRESH_MS = 30_000;

/** A team's budget as stored. */
export interface TeamBudget extends KeyBudget {
  team: string;
  updatedAt: Date;
}

/**
 * Budgets of teams (a team is a managed key's `owner`), shared by all the team's keys. All
 * of them are held in process (there are few teams), so a request learns whether its team
 * has one without a database round trip; every change is announced on `gw_team_budgets`
 * and every replica re-reads them at once (and every 30 s as a backstop).
 */
export class TeamBudgets {
  private readonly logger = new Logger('Budgets');
  private budgets = new Map<string, TeamBudget>();
  private timer?: NodeJS.Timeout;
  private loading?: Promise<void>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly events: DbEvents,
  ) {}

  /** Loads the budgets and follows changes; call once at boot. */
  async start(): Promise<void> {
    this.events.subscribe('gw_team_budgets', () => void this.reload());
    this.events.onResync(() => void this.reload());
    await this.reload();
    this.timer = setInterval(() => void this.reload(), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The team's budget, if it has one (synchronous: read on the request path). */
  get(team: string | undefined): TeamBudget | undefined {
    return team === undefined ? undefined : this.budgets.get(team);
  }

  /** Every team budget, by team name. */
  list(): TeamBudget[] {
    return [...this.budgets.values()].sort((a, b) => a.team.localeCompare(b.team));
  }

  /**
   * Sets (or, with null, removes) a team's budget and tells every replica. The one place a
   * team budget changes: an audit record of the change belongs here.
   */
  async change(team: string, budget: KeyBudget | null): Promise<TeamBudget | undefined> {
    if (budget === null) {
      await this.db.deleteFrom('team_budgets').where('team', '=', team).execute();
    } else {
      await sql`
        INSERT INTO team_budgets (team, amount_micros, period, updated_at)
        VALUES (${team}, ${budget.amountMicros.toString()}::bigint, ${budget.period}, now())
        ON CONFLICT (team) DO UPDATE SET amount_micros = excluded.amount_micros,
          period = excluded.period, updated_at = excluded.updated_at`.execute(this.db);
    }
    this.logger.log(
      budget === null ? `removed the budget of team '${team}'` : `set the budget of team '${team}'`,
    );
    // A read already under way may predate the write: wait for it, then read again.
    await this.loading;
    await this.reload();
    await this.events.publish('gw_team_budgets', JSON.stringify({ team })).catch(() => undefined);
    return this.budgets.get(team);
  }

  /** Re-reads every team budget; concurrent callers share one read. */
  reload(): Promise<void> {
    this.loading ??= (async () => {
      try {
        const rows = await this.db.selectFrom('team_budgets').selectAll().execute();
        this.budgets = new Map(
          rows.map((r) => [
            r.team,
            {
              team: r.team,
              amountMicros: BigInt(r.amount_micros),
              period: r.period as BudgetPeriod,
              updatedAt: new Date(r.updated_at),
            },
          ]),
        );
      } catch (err) {
        // The budgets known so far stay in force until the database answers again.
        this.logger.warn(`cannot read the team budgets: ${(err as Error).message}`);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }
}
