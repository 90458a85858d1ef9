import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { type ApiKeyInfo, type KeyBudget, budgetWindow } from '../common/key-policy';
import {
  BudgetExceededError,
  ClientClosedRequestError,
  GatewayError,
  InvalidRequestError,
} from '../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import type { BudgetCounterId, BudgetCounterState, BudgetCounters } from './budget-counters';
import { PICO_PER_MICRO, formatUnits } from '../common/money';
import type { TeamBudgets } from './team-budgets';

/**
 * Spending caps, as the limits see them: whether a key may start another request. The
 * limits hold this interface (BUDGET_GATE), not the ledger behind it.
 */
export interface BudgetGate {
  /**
   * Whether the key or its team has a budget. Synchronous and free: a key without one pays
   * nothing more on the request path.
   */
  applies(key: ApiKeyInfo): boolean;
  /**
   * Reserves `worstCasePico` against the key's budget and its team's, shared by every
   * replica, and leaves on the request what settles the reservation to the real cost when
   * the response closes. Throws BudgetExceededError when it does not fit. `protections`:
   * the worst case of the request's protection judge calls, added when they count against
   * budgets (asked only then).
   */
  reserve(
    key: ApiKeyInfo,
    worstCasePico: bigint,
    req: GatewayRequest,
    res: GatewayResponse,
    protections?: () => bigint,
  ): Promise<void>;
}

export const BUDGET_GATE = Symbol('BUDGET_GATE');

/**
 * A request whose answer is made after the response (Responses `background: true`) from a
 * key with a budget: its cost would come too late to settle the reservation, which would
 * close at nothing, so the budget could not hold.
 */
export class DetachedWithBudgetError extends InvalidRequestError {
  constructor() {
    super(
      "'background: true' is not available to an API key (or team) with a budget: the gateway does not see what a background response costs, so the budget could not hold. Send the request without 'background' (stream it for long answers), or use a key without a budget.",
      'background',
      'background_not_allowed_with_budget',
    );
  }
}

const PERIOD_TEXT = { day: 'per day', month: 'per month', total: 'in total' } as const;
/** Counters known to exist, at most (then forgotten and created again: a no-op insert). */
const MAX_ENSURED = 50_000;
/** How often each replica releases reservations whose replica died before settling. */
const SWEEP_INTERVAL_MS = 60_000;
const MAX_SETTLE_BACKOFF_MS = 5_000;

/** The budget store (the key store's database) did not answer: a hard limit cannot admit. */
export class BudgetStoreUnavailableError extends GatewayError {
  constructor() {
    super(
      503,
      'overloaded',
      'The budget of this API key could not be checked right now because the key store is unreachable. Please retry shortly.',
      { code: 'budget_store_unavailable', headers: { 'retry-after': '1' } },
    );
  }
}

/** One budget a request reserves against. */
interface Claim {
  counter: BudgetCounterId;
  budget: KeyBudget;
  limitPico: bigint;
}

const usd = (pico: bigint): string => `$${formatUnits(pico > 0n ? pico : 0n, 12)}`;

function refusal(
  claim: Claim,
  state: BudgetCounterState,
  worstPico: bigint,
  now: number,
): BudgetExceededError {
  const { budget, counter } = claim;
  const who = counter.scope === 'key' ? 'This API key' : `The team '${counter.id}' of this API key`;
  const amount = `$${formatUnits(budget.amountMicros, 6)} ${PERIOD_TEXT[budget.period]}`;
  const { resetsAt } = budgetWindow(budget.period, now);
  const when =
    resetsAt === undefined
      ? 'It does not reset: raise the budget or use another key.'
      : `It resets at ${new Date(resetsAt).toISOString().replace('.000Z', 'Z')}.`;
  const left = claim.limitPico - state.spentPico - state.reservedPico;
  if (left <= 0n && state.reservedPico === 0n) {
    return new BudgetExceededError(
      `${who} has spent its budget of ${amount} (${usd(state.spentPico)} used). ${when}`,
    );
  }
  return new BudgetExceededError(
    `${who} cannot cover this request: its worst-case cost (prompt and maximum output at catalog prices) is ${usd(worstPico)}, and ${usd(left)} is left of the budget of ${amount} (${usd(state.spentPico)} used, ${usd(state.reservedPico)} reserved by requests in progress), ${usd(worstPico - (left > 0n ? left : 0n))} short. Lower max_tokens or wait for requests in progress. ${when}`,
  );
}

/**
 * Budgets as hard limits. Before the upstream call a request reserves its worst-case cost
 * against its key's budget and its team's, each with one conditional UPDATE of the budget's
 * counter row in the shared database, which admits it only if spent + reserved + cost fits;
 * when the response closes the reservation is replaced by the ledger row's real cost. A
 * request's reservation expires (BUDGET_RESERVATION_TTL_MS) and is swept unless its replica
 * renews it (every third of the ttl while the request runs), so a replica that dies
 * mid-request holds nothing for longer than that.
 */
export class ReservingBudgetGate implements BudgetGate {
  private readonly logger = new Logger('Budgets');
  private readonly ensured = new Set<string>();
  private readonly settling = new Set<Promise<void>>();
  /** Reservations of requests still running here, renewed until they settle. */
  private readonly live = new Set<string>();
  private sweeper?: NodeJS.Timeout;
  private renewer?: NodeJS.Timeout;
  private renewing = false;

  constructor(
    private readonly counters: BudgetCounters,
    private readonly teams: TeamBudgets,
    private readonly includeProtections: boolean,
    private readonly ttlMs: number,
  ) {}

  applies(key: ApiKeyInfo): boolean {
    return key.budget !== undefined || this.teams.get(key.team) !== undefined;
  }

  async reserve(
    key: ApiKeyInfo,
    requestPico: bigint,
    req: GatewayRequest,
    res: GatewayResponse,
    protections?: () => bigint,
  ): Promise<void> {
    const now = Date.now();
    const worstCasePico =
      this.includeProtections && protections !== undefined
        ? requestPico + protections()
        : requestPico;
    const claims: Claim[] = [];
    if (key.budget !== undefined) {
      claims.push(claimOf('key', key.id, key.budget, now));
    }
    const team = this.teams.get(key.team);
    if (team !== undefined) {
      claims.push(claimOf('team', team.team, team, now));
    }
    const id = randomUUID();
    const taken: Claim[] = [];
    // The key's budget first, then the team's; one that does not fit gives back the other.
    for (const claim of claims) {
      let fits: boolean;
      try {
        fits = await this.take(claim, id, worstCasePico);
      } catch (err) {
        this.logger.warn(`cannot reserve against a budget: ${(err as Error).message}`);
        this.release(taken, id, 0n);
        throw new BudgetStoreUnavailableError();
      }
      if (!fits) {
        this.release(taken, id, 0n);
        const state = await this.counters
          .read(claim.counter)
          .catch(() => undefined)
          .then((s) => s ?? { spentPico: claim.limitPico, reservedPico: 0n });
        throw refusal(claim, state, worstCasePico, now);
      }
      taken.push(claim);
    }
    let settled = false;
    this.live.add(id);
    req.ctx.budgetHold = {
      settle: (cost) => {
        if (settled) {
          return;
        }
        settled = true;
        this.live.delete(id);
        const charge = this.includeProtections
          ? cost.costPico + cost.protectionCostPico
          : cost.costPico;
        this.release(taken, id, charge);
      },
    };
    // The client left while the reservation was being made: its 'close' has come and gone.
    if (res.closed) {
      req.ctx.budgetHold.settle({ costPico: 0n, protectionCostPico: 0n });
      throw new ClientClosedRequestError();
    }
  }

  /**
   * Starts the periodic sweep of expired reservations, and the renewal of this replica's
   * own every third of their ttl: a request that runs longer than the ttl (a long stream)
   * keeps its hold, and only a replica that died stops renewing.
   */
  start(): void {
    this.sweeper = setInterval(() => void this.sweepExpired(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
    this.renewer = setInterval(() => void this.renewLive(), Math.max(this.ttlMs / 3, 100));
    this.renewer.unref();
  }

  /** Waits (up to `deadlineMs`) for settlements still being written, at shutdown. */
  async close(deadlineMs = 10_000): Promise<void> {
    clearInterval(this.sweeper);
    clearInterval(this.renewer);
    const until = Date.now() + deadlineMs;
    while (this.settling.size > 0 && Date.now() < until) {
      await Promise.race([
        Promise.allSettled([...this.settling]),
        new Promise((r) => setTimeout(r, Math.max(until - Date.now(), 0))),
      ]);
    }
    if (this.settling.size > 0) {
      this.logger.error(
        `shutdown: ${this.settling.size} budget reservations could not be settled; they expire on their own`,
      );
    }
  }

  /** Extends the expiry of every reservation still held here: one statement for all. */
  async renewLive(): Promise<void> {
    // One renewal at a time: a stalled database must not collect an UPDATE per tick, each
    // holding a connection the requests need.
    if (this.live.size === 0 || this.renewing) {
      return;
    }
    this.renewing = true;
    try {
      await this.counters.renew([...this.live], this.ttlMs);
    } catch (err) {
      this.logger.warn(`cannot renew budget reservations: ${(err as Error).message}`);
    } finally {
      this.renewing = false;
    }
  }

  /** Releases every counter holding expired reservations (any replica may do it). */
  async sweepExpired(): Promise<void> {
    try {
      for (const counter of await this.counters.withExpired(100)) {
        await this.counters.sweep(counter);
      }
    } catch (err) {
      this.logger.warn(`cannot sweep expired budget reservations: ${(err as Error).message}`);
    }
  }

  /** Reserves against one budget; expired reservations are swept before a refusal stands. */
  private async take(claim: Claim, id: string, amount: bigint): Promise<boolean> {
    const name = `${claim.counter.scope}\u0000${claim.counter.id}\u0000${claim.counter.period}\u0000${claim.counter.start}`;
    if (!this.ensured.has(name)) {
      await this.counters.ensure(claim.counter);
      if (this.ensured.size >= MAX_ENSURED) {
        this.ensured.clear();
      }
      this.ensured.add(name);
    }
    const reserve = (): Promise<boolean> =>
      this.counters.reserve(claim.counter, id, amount, claim.limitPico, this.ttlMs);
    if (await reserve()) {
      return true;
    }
    return (await this.counters.sweep(claim.counter)) > 0n && reserve();
  }

  /**
   * Settles the reservation on each budget with `chargePico`, retrying with backoff while
   * the database is unreachable, until the reservation would have expired anyway.
   */
  private release(claims: readonly Claim[], id: string, chargePico: bigint): void {
    for (const claim of claims) {
      const done = this.settleOne(claim.counter, id, chargePico).finally(() =>
        this.settling.delete(done),
      );
      this.settling.add(done);
    }
  }

  private async settleOne(counter: BudgetCounterId, id: string, charge: bigint): Promise<void> {
    const giveUpAt = Date.now() + this.ttlMs;
    for (let backoff = 100; ; backoff = Math.min(backoff * 2, MAX_SETTLE_BACKOFF_MS)) {
      try {
        await this.counters.settle(counter, id, charge);
        return;
      } catch (err) {
        if (Date.now() + backoff > giveUpAt) {
          this.logger.error(
            `cannot settle a budget reservation of ${counter.scope} ${counter.id}: ${(err as Error).message}`,
          );
          return;
        }
        await new Promise((r) => setTimeout(r, backoff));
      }
    }
  }
}

function claimOf(scope: 'key' | 'team', id: string, budget: KeyBudget, now: number): Claim {
  return {
    counter: { scope, id, period: budget.period, start: budgetWindow(budget.period, now).start },
    budget,
    limitPico: budget.amountMicros * PICO_PER_MICRO,
  };
}
