import { Controller, Get, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../common/public.decorator';
import { GatewayError, InvalidRequestError } from '../common/errors/gateway-errors';
import { USAGE_GROUPS, type UsageFilter, type UsageGroup, sumTotals } from '../usage/ledger-row';
import { UsagePipeline } from '../usage/usage.module';
import { pageLimit } from './admin-keys.controller';
import { AdminGuard, principalOf } from './admin.guard';
import { parseTime } from './key-input';
import { exportFormat, streamExport } from './usage-export';
import { ledgerRowView, totalsView } from './views';

const DEFAULT_RANGE_MS = 30 * 86_400_000;
/** Rows per database read of an export: few round trips, bounded memory. */
const EXPORT_PAGE = 1000;

/** A member asked for usage of another team, or for replica-wide figures. */
class MemberUsageScopeError extends GatewayError {
  constructor(param: string | null) {
    super(403, 'permission', 'Members see the usage of their own team only.', {
      param,
      code: 'other_team',
    });
  }
}

/**
 * `/admin/v1/usage`: totals over the ledger (optionally grouped by key, team, model, day
 * or hour, UTC), filtered by time, key, team or model, and the ledger rows themselves,
 * newest first, paginated by cursor or streamed whole as CSV / JSON Lines. Rows still
 * buffered in a replica (at most a flush interval old) are not yet visible.
 */
@Controller('admin/v1/usage')
@Public()
@UseGuards(AdminGuard)
export class AdminUsageController {
  constructor(private readonly usage: UsagePipeline) {}

  @Get()
  async totals(
    @Req() req: Request,
    @Query('from') from?: string,
    @Query('to') to?: string,
    @Query('key_id') keyId?: string,
    @Query('model') model?: string,
    @Query('group_by') groupBy?: string,
    @Query('team') team?: string,
  ): Promise<object> {
    if (groupBy !== undefined && !USAGE_GROUPS.includes(groupBy as UsageGroup)) {
      throw new InvalidRequestError(
        `Invalid 'group_by': expected one of ${USAGE_GROUPS.join(', ')}.`,
        'group_by',
        'invalid_value',
      );
    }
    const filter = this.filter(req, from, to, keyId, model, team);
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
    @Query('team') team?: string,
  ): Promise<object> {
    const page = await this.usage
      .requireRepo()
      .requests(this.filter(req, from, to, keyId, model, team), pageLimit(limit), after);
    return {
      object: 'list',
      data: page.rows.map(ledgerRowView),
      has_more: page.next !== undefined,
      next_cursor: page.next ?? null,
    };
  }

  /**
   * Every row of the filter, newest first, as one CSV (`format=csv`, the default) or JSON
   * Lines download, each exactly once: read in pages of the same cursor as `/requests`.
   */
  @Get('export')
  async export(
    @Req() req: Request,
    @Res() res: Response,
    @Query('format') format?: string,
    @Query('from') from?: string,
    @Query('to') to?: string,
    @Query('key_id') keyId?: string,
    @Query('model') model?: string,
    @Query('team') team?: string,
  ): Promise<void> {
    const kind = exportFormat(format);
    const filter = this.filter(req, from, to, keyId, model, team);
    const repo = this.usage.requireRepo();
    const first = await repo.requests(filter, EXPORT_PAGE);
    await streamExport(res, kind, first, (cursor) => repo.requests(filter, EXPORT_PAGE, cursor));
  }

  /** Ledger writer counters of this replica (buffered, written, dropped rows). */
  @Get('ledger')
  ledger(@Req() req: Request): object {
    if (principalOf(req).role !== 'admin') {
      throw new MemberUsageScopeError(null);
    }
    return { object: 'ledger_stats', ...this.usage.requireLedger().snapshot() };
  }

  /**
   * The rows asked for. A member's are always those recorded for their team (every key
   * of it, revoked ones too), whatever else the query names.
   */
  private filter(
    req: Request,
    from: string | undefined,
    to: string | undefined,
    keyId: string | undefined,
    model: string | undefined,
    team: string | undefined,
  ): UsageFilter {
    for (const [name, value] of Object.entries({ key_id: keyId, model, team })) {
      if (value !== undefined && typeof value !== 'string') {
        // A repeated parameter arrives as an array.
        throw new InvalidRequestError(`Invalid '${name}': give it once.`, name, 'invalid_value');
      }
    }
    const who = principalOf(req);
    if (who.role === 'member') {
      if (team !== undefined && team !== who.team) {
        throw new MemberUsageScopeError('team');
      }
      team = who.team ?? '';
    }
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
    return { from: start, to: end, keyId, model, team };
  }
}
