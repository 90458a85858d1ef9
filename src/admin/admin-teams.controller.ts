import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Put,
  Req,
  UseGuards,
} from '@nestjs/common';
import type { Request } from 'express';
import { diff } from '../audit/audit-entry';
import { AuditLog } from '../audit/audit-log';
import { type KeyBudget, budgetWindow } from '../common/key-policy';
import { Public } from '../common/public.decorator';
import { GatewayError, InvalidRequestError } from '../common/errors/gateway-errors';
import type { BudgetCounterId } from '../usage/budget-counters';
import { PICO_PER_MICRO, microsToUsd, picoToUsd } from '../common/money';
import type { TeamBudget } from '../usage/team-budgets';
import { UsagePipeline } from '../usage/usage.module';
import type { AdminPrincipal } from '../console/admin-auth';
import { AdminGuard, principalOf } from './admin.guard';
import { auditSource } from './audit-facts';
import { parseBudget } from './key-input';

/** Longest team name, as for a key's `owner`. */
const MAX_TEAM_CHARS = 200;

class TeamNotFoundError extends GatewayError {
  constructor(team: string) {
    super(404, 'not_found', `No team '${team}' visible to you.`, {
      param: 'team',
      code: 'team_not_found',
    });
  }
}

class AdminOnlyError extends GatewayError {
  constructor() {
    super(403, 'permission', 'Only admins change team budgets.', { code: 'admin_only' });
  }
}

function teamName(raw: string): string {
  if (raw.trim() === '' || raw.length > MAX_TEAM_CHARS) {
    throw new InvalidRequestError(
      `Invalid 'team': expected a non-empty name of at most ${MAX_TEAM_CHARS} characters.`,
      'team',
      'invalid_value',
    );
  }
  return raw;
}

/**
 * `/admin/v1/teams`: the budgets of teams (a team is its keys' `owner`), which all the
 * team's keys share on top of their own. Admins set and remove them; a member reads their
 * own team's. Each answer carries what the budget counts now: spent and reserved by
 * requests in progress, in its current period.
 */
@Controller('admin/v1/teams')
@Public()
@UseGuards(AdminGuard)
export class AdminTeamsController {
  constructor(
    private readonly usage: UsagePipeline,
    private readonly audit: AuditLog,
  ) {}

  @Get()
  async list(@Req() req: Request): Promise<object> {
    const who = principalOf(req);
    const teams = this.teams();
    const budgets =
      who.role === 'member' ? teams.list().filter((b) => b.team === who.team) : teams.list();
    return { object: 'list', data: await Promise.all(budgets.map((b) => this.view(b.team, b))) };
  }

  @Get(':team/budget')
  get(@Param('team') raw: string, @Req() req: Request): Promise<object> {
    const team = this.visible(principalOf(req), teamName(raw));
    return this.view(team, this.teams().get(team));
  }

  @Put(':team/budget')
  async set(
    @Param('team') raw: string,
    @Body() body: unknown,
    @Req() req: Request,
  ): Promise<object> {
    this.adminOnly(principalOf(req));
    const team = teamName(raw);
    const budget = parseBudget(body === undefined ? {} : body, '');
    if (budget === null) {
      throw new InvalidRequestError(
        'Expected {"amount_usd": number, "period": "day" | "month" | "total"}; DELETE removes a budget.',
        null,
        'invalid_value',
      );
    }
    return this.view(team, await this.change(req, team, budget));
  }

  @Delete(':team/budget')
  @HttpCode(200)
  async remove(@Param('team') raw: string, @Req() req: Request): Promise<object> {
    this.adminOnly(principalOf(req));
    const team = teamName(raw);
    return this.view(team, await this.change(req, team, null));
  }

  /** Applies a team budget change and puts it on the audit record (before and after). */
  private async change(
    req: Request,
    team: string,
    budget: KeyBudget | null,
  ): Promise<TeamBudget | undefined> {
    const teams = this.teams();
    const fields = (b: TeamBudget | undefined) =>
      b === undefined ? null : { amount_usd: microsToUsd(b.amountMicros), period: b.period };
    const before = fields(teams.get(team));
    const after = await teams.change(team, budget);
    this.audit.record({
      ...auditSource(principalOf(req), req),
      action: budget === null ? 'team.budget_remove' : 'team.budget_update',
      target: { kind: 'team', id: team },
      team,
      change: diff({ budget: before }, { budget: fields(after) }),
    });
    return after;
  }

  private teams(): NonNullable<UsagePipeline['teams']> {
    this.usage.requireRepo();
    return this.usage.teams as NonNullable<UsagePipeline['teams']>;
  }

  private adminOnly(who: AdminPrincipal): void {
    if (who.role !== 'admin') {
      throw new AdminOnlyError();
    }
  }

  /** A member sees their own team only; another team is a 404, as another team's key is. */
  private visible(who: AdminPrincipal, team: string): string {
    if (who.role === 'member' && who.team !== team) {
      throw new TeamNotFoundError(team);
    }
    return team;
  }

  private async view(team: string, budget: TeamBudget | undefined): Promise<object> {
    if (budget === undefined) {
      return { object: 'team_budget', team, budget: null, spend: null, updated_at: null };
    }
    const now = Date.now();
    const window = budgetWindow(budget.period, now);
    const counter: BudgetCounterId = {
      scope: 'team',
      id: team,
      period: budget.period,
      start: window.start,
    };
    const counters = this.usage.counters as NonNullable<UsagePipeline['counters']>;
    // The counter the reservations use, created from the ledger if no request made it yet.
    await counters.ensure(counter);
    const state = (await counters.read(counter)) ?? { spentPico: 0n, reservedPico: 0n };
    const left = budget.amountMicros * PICO_PER_MICRO - state.spentPico - state.reservedPico;
    return {
      object: 'team_budget',
      team,
      budget: { amount_usd: microsToUsd(budget.amountMicros), period: budget.period },
      spend: {
        period: budget.period,
        spent_usd: picoToUsd(state.spentPico),
        reserved_usd: picoToUsd(state.reservedPico),
        remaining_usd: picoToUsd(left > 0n ? left : 0n),
        since: new Date(window.start).toISOString(),
        resets_at: window.resetsAt === undefined ? null : new Date(window.resetsAt).toISOString(),
      },
      updated_at: budget.updatedAt.toISOString(),
    };
  }
}
