import { Controller, Get, Query, Req, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { Public } from '../auth/public.decorator';
import { GatewayError, InvalidRequestError } from '../common/errors/gateway-errors';
import { KeysService } from '../keys/keys.service';
import { USAGE_GROUPS, type UsageFilter, type UsageGroup, sumTotals } from '../usage/ledger-row';
import { UsagePipeline } from '../usage/usage.module';
import { pageLimit } from './admin-keys.controller';
import { AdminGuard, principalOf } from './admin.guard';
import { parseTime } from './key-input';
import { ledgerRowView, totalsView } from './views';

const DEFAULT_RANGE_MS = 30 * 86_400_000;

/** A member asked for usage beyond one of their team's keys. */
class MemberUsageScopeError extends GatewayError {
  constructor() {
    super(403, 'permission', "Members see usage per key of their own team: pass 'key_id'.", {
      param: 'key_id',
      code: 'other_team',
    });
  }
}

/**
 * `/admin/v1/usage`: totals over the ledger (optionally grouped by key, model, day or
 * hour, UTC) and the ledger rows themselves, newest first, paginated by cursor. Rows
 * still buffered in a replica (at most a flush interval old) are not yet visible.
 */
@Controller('admin/v1/usage')
@Public()
@UseGuards(AdminGuard)
export class AdminUsageController {
  constructor(
    private readonly usage: UsagePipeline,
    private readonly keys: KeysService,
  ) {}

  @Get()
  async totals(
    @Req() req: Request,
    @Query('from') from?: string,
    @Query('to') to?: string,
    @Query('key_id') keyId?: string,
    @Query('model') model?: string,
    @Query('group_by') groupBy?: string,
  ): Promise<object> {
    if (groupBy !== undefined && !USAGE_GROUPS.includes(groupBy as UsageGroup)) {
      throw new InvalidRequestError(
        `Invalid 'group_by': expected one of ${USAGE_GROUPS.join(', ')}.`,
        'group_by',
        'invalid_value',
      );
    }
    await this.scope(req, keyId);
    const filter = this.filter(from, to, keyId, model);
    const group = groupBy as UsageGroup | undefined;
    const repo = this.usage.requireRepo();
    // One query: grouped rows and their sum come from the same snapshot of the ledger.
    const rows = await repo.totals(filter, group);
    const totals = group === undefined ? rows[0] : sumTotals(rows);
    return {
      object: 'usage',
      from: filter.from.toISOString(),
      to: filter.to.toISOString(),
      group_by: group ?? null,
      data: group === undefined ? [] : rows.map((r) => totalsView(r, group)),
      totals: totalsView(totals),
    };
  }

  @Get('requests')
  async requests(
    @Req() req: Request,
    @Query('from') from?: string,
    @Query('to') to?: string,
    @Query('key_id') keyId?: string,
    @Query('model') model?: string,
    @Query('limit') limit?: string,
    @Query('after') after?: string,
  ): Promise<object> {
    await this.scope(req, keyId);
    const page = await this.usage
      .requireRepo()
      .requests(this.filter(from, to, keyId, model), pageLimit(limit), after);
    return {
      object: 'list',
      data: page.rows.map(ledgerRowView),
      has_more: page.next !== undefined,
      next_cursor: page.next ?? null,
    };
  }

  /** Ledger writer counters of this replica (buffered, written, dropped rows). */
  @Get('ledger')
  ledger(@Req() req: Request): object {
    if (principalOf(req).role !== 'admin') {
      throw new MemberUsageScopeError();
    }
    return { object: 'ledger_stats', ...this.usage.requireLedger().snapshot() };
  }

  /** Members: only with the id of a key of their own team (the ledger has no team column). */
  private async scope(req: Request, keyId: string | undefined): Promise<void> {
    const who = principalOf(req);
    if (who.role === 'admin') {
      return;
    }
    const key = keyId === undefined ? undefined : await this.keys.get(keyId);
    if (key === undefined || key.owner !== who.team) {
      throw new MemberUsageScopeError();
    }
  }

  private filter(
    from: string | undefined,
    to: string | undefined,
    keyId: string | undefined,
    model: string | undefined,
  ): UsageFilter {
    const now = Date.now();
    const end = to === undefined ? new Date(now + 1) : parseTime(to, 'to', now, false);
    const start =
      from === undefined
        ? new Date(end.getTime() - DEFAULT_RANGE_MS)
        : parseTime(from, 'from', now, false);
    if (start.getTime() >= end.getTime()) {
      throw new InvalidRequestError(
        "Invalid 'from': it must be before 'to'.",
        'from',
        'invalid_value',
      );
    }
    return { from: start, to: end, keyId, model };
  }
}
