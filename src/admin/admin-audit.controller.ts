import { Controller, Get, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditLog } from '../audit/audit-log';
import type {
  AuditCursor,
  AuditFilter,
  AuditRepository,
  AuditRow,
} from '../audit/audit.repository';
import { Public } from '../auth/public.decorator';
import { GatewayError, InvalidRequestError } from '../common/errors/gateway-errors';
import { own } from '../common/own';
import { isRowId } from '../db/row-id';
import { AdminGuard, principalOf } from './admin.guard';
import { parseTime } from './key-input';

const EXPORT_PAGE = 1000;
const OUTCOMES = ['success', 'failure', 'denied'];

/** A member asked for another team's entries. */
class MemberAuditScopeError extends GatewayError {
  constructor() {
    super(403, 'permission', "Members see their own team's audit entries only.", {
      param: 'team',
      code: 'other_team',
    });
  }
}

class AuditUnavailableError extends GatewayError {
  constructor() {
    super(404, 'not_found', 'The audit log needs the key store (KEY_STORE=database).', {
      code: 'audit_unavailable',
    });
  }
}

/** An audit entry as the admin API shows it. */
export function auditView(r: AuditRow): Record<string, unknown> {
  return {
    object: 'audit_entry',
    id: r.id,
    at: r.at.toISOString(),
    actor: { kind: r.actorKind, id: r.actorId, name: r.actorName },
    client: r.client,
    action: r.action,
    target: r.targetKind === null ? null : { kind: r.targetKind, id: r.targetId },
    team: r.team,
    change: r.change,
    outcome: r.outcome,
  };
}

/** `<epoch ms>.<id>` in base64url: where the next page starts (newest first). */
function encodeCursor(r: AuditRow): string {
  return Buffer.from(`${r.at.getTime()}.${r.id}`).toString('base64url');
}

function decodeCursor(raw: string | undefined): AuditCursor | undefined {
  if (raw === undefined) {
    return undefined;
  }
  const text = String(raw);
  const m = /^(\d{1,15})\.(\d{1,19})$/.exec(Buffer.from(text, 'base64url').toString('latin1'));
  const cursor = m === null ? undefined : { at: new Date(Number(m[1])), id: m[2] };
  // Round trip: only what encodeCursor writes (an id within int8, no leading zeros) passes.
  if (
    cursor === undefined ||
    !isRowId(cursor.id) ||
    Buffer.from(`${cursor.at.getTime()}.${cursor.id}`).toString('base64url') !== text
  ) {
    throw new InvalidRequestError(
      "Invalid 'after': pass the next_cursor of the previous page unchanged.",
      'after',
      'invalid_cursor',
    );
  }
  return cursor;
}

function auditLimit(raw: string | undefined): number {
  if (raw === undefined) {
    return 50;
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 500) {
    throw new InvalidRequestError(
      "Invalid 'limit': expected an integer from 1 to 500.",
      'limit',
      'invalid_value',
    );
  }
  return n;
}

const CSV_COLUMNS = [
  'id',
  'at',
  'actor_kind',
  'actor_id',
  'actor_name',
  'client',
  'action',
  'target_kind',
  'target_id',
  'team',
  'outcome',
  'change',
];

/** RFC 4180 cell; a leading =, +, - or @ is prefixed so a spreadsheet runs no formula. */
function csvCell(v: unknown): string {
  let s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  if (/^[=+\-@\t\r]/.test(s)) {
    s = `'${s}`;
  }
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csvRow(r: AuditRow): string {
  return [
    r.id,
    r.at.toISOString(),
    r.actorKind,
    r.actorId,
    r.actorName,
    r.client,
    r.action,
    r.targetKind,
    r.targetId,
    r.team,
    r.outcome,
    r.change,
  ]
    .map(csvCell)
    .join(',');
}

/**
 * `/admin/v1/audit`: the audit log, newest first, filtered by actor, action (exact, or a
 * domain such as `key.`), target, team, outcome and time, paged by a (time, id) cursor so
 * that every entry appears exactly once however many arrive meanwhile; and
 * `/admin/v1/audit/export` with the same filters, as CSV or JSON Lines. Admins see every
 * entry; a member sees the entries of their own team only.
 */
@Controller('admin/v1/audit')
@Public()
@UseGuards(AdminGuard)
export class AdminAuditController {
  constructor(private readonly audit: AuditLog) {}

  @Get()
  async list(
    @Req() req: Request,
    @Query() query: Record<string, unknown>,
    @Query('limit') limit?: string,
    @Query('after') after?: string,
  ): Promise<object> {
    const filter = this.filter(req, query);
    const n = auditLimit(limit);
    // One row more than asked: whether another page exists, without a count.
    const rows = await this.repo().list(filter, n + 1, decodeCursor(after));
    const page = rows.slice(0, n);
    return {
      object: 'list',
      data: page.map(auditView),
      has_more: rows.length > n,
      next_cursor: rows.length > n ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  @Get('export')
  async export(
    @Req() req: Request,
    @Res() res: Response,
    @Query() query: Record<string, unknown>,
    @Query('format') format?: string,
  ): Promise<void> {
    if (format !== undefined && format !== 'csv' && format !== 'jsonl') {
      throw new InvalidRequestError(
        "Invalid 'format': expected csv or jsonl.",
        'format',
        'invalid_value',
      );
    }
    const filter = this.filter(req, query);
    const repo = this.repo();
    const csv = format !== 'jsonl';
    // The first page before any header: a database failure still gets a proper error.
    let rows = await repo.list(filter, EXPORT_PAGE);
    res.status(200);
    res.setHeader('content-type', csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
    res.setHeader(
      'content-disposition',
      `attachment; filename="audit-${new Date().toISOString().slice(0, 10)}.${csv ? 'csv' : 'jsonl'}"`,
    );
    if (csv) {
      res.write(`${CSV_COLUMNS.join(',')}\r\n`);
    }
    let closed = false;
    res.on('close', () => (closed = true));
    while (rows.length > 0 && !closed) {
      const text = rows
        .map((r) => (csv ? `${csvRow(r)}\r\n` : `${JSON.stringify(auditView(r))}\n`))
        .join('');
      if (!res.write(text)) {
        await new Promise((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
      }
      if (rows.length < EXPORT_PAGE) {
        break;
      }
      try {
        rows = await repo.list(filter, EXPORT_PAGE, {
          at: rows[rows.length - 1].at,
          id: rows[rows.length - 1].id,
        });
      } catch {
        // Headers are gone: cut the body so the client sees an incomplete download.
        res.destroy();
        return;
      }
    }
    res.end();
  }

  private repo(): AuditRepository {
    if (this.audit.repo === null) {
      throw new AuditUnavailableError();
    }
    return this.audit.repo;
  }

  private filter(req: Request, q: Record<string, unknown>): AuditFilter {
    const one = (name: string): string | undefined => {
      const v = own(q, name);
      if (v !== undefined && (typeof v !== 'string' || v.length > 200)) {
        throw new InvalidRequestError(
          `Invalid '${name}': give it once, at most 200 characters.`,
          name,
          'invalid_value',
        );
      }
      return v === '' ? undefined : v;
    };
    const outcome = one('outcome');
    if (outcome !== undefined && !OUTCOMES.includes(outcome)) {
      throw new InvalidRequestError(
        `Invalid 'outcome': expected one of ${OUTCOMES.join(', ')}.`,
        'outcome',
        'invalid_value',
      );
    }
    const now = Date.now();
    const from = one('from');
    const to = one('to');
    let team = one('team');
    const who = principalOf(req);
    if (who.role === 'member') {
      if (team !== undefined && team !== who.team) {
        throw new MemberAuditScopeError();
      }
      team = who.team ?? '';
    }
    return {
      actor: one('actor'),
      action: one('action'),
      target: one('target'),
      team,
      outcome,
      from: from === undefined ? undefined : parseTime(from, 'from', now, false),
      to: to === undefined ? undefined : parseTime(to, 'to', now, false),
    };
  }
}
