import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import { InvalidRequestError } from '../common/errors/gateway-errors';
import type { LedgerPage } from '../usage/ledger-row';
import { ledgerRowView } from './views';

const logger = new Logger('UsageExport');

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The CSV's columns, in order: the console's export has always had these. */
export const CSV_COLUMNS = [
  'created_at',
  'request_id',
  'key_id',
  'team',
  'endpoint',
  'model_requested',
  'model',
  'provider',
  'status',
  'outcome',
  'stream',
  'input_tokens',
  'cached_input_tokens',
  'output_tokens',
  'reasoning_tokens',
  'cost_usd',
  'latency_ms',
  'error_code',
] as const;

/** The `format` parameter: csv when absent. */
export function exportFormat(raw: unknown): ExportFormat {
  if (raw === undefined) {
    return 'csv';
  }
  if (typeof raw !== 'string' || !EXPORT_FORMATS.includes(raw as ExportFormat)) {
    throw new InvalidRequestError(
      `Invalid 'format': expected one of ${EXPORT_FORMATS.join(', ')}.`,
      'format',
      'invalid_value',
    );
  }
  return raw as ExportFormat;
}

/**
 * One CSV cell (RFC 4180). A cell a spreadsheet would run as a formula (=, +, -, @ first)
 * gets a leading quote mark: model ids and request ids come from clients.
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  const s = value === null || value === undefined ? '' : String(value);
  return /[",\n\r]|^[=+\-@]/.test(s)
    ? `"${s.replace(/^([=+\-@])/, "'$1").replace(/"/g, '""')}"`
    : s;
}

function lines(format: ExportFormat, page: LedgerPage): string {
  let out = '';
  for (const row of page.rows) {
    const view = ledgerRowView(row);
    out +=
      format === 'jsonl'
        ? `${JSON.stringify(view)}\n`
        : `\r\n${CSV_COLUMNS.map((c) => csvCell(view[c] as Parameters<typeof csvCell>[0])).join(',')}`;
  }
  return out;
}

/**
 * Streams every row of a listing: `first` is its first page (read before anything was
 * sent, so that a bad query still gets its error envelope), `next` reads the page after a
 * cursor. The listing's cursor fixes what it contains when it starts, so each row goes
 * out once. Waits for the socket to drain between pages; stops when the client leaves.
 * A failure after the first bytes cuts the connection: a download that ends early must
 * not look complete.
 */
export async function streamExport(
  res: ServerResponse,
  format: ExportFormat,
  first: LedgerPage,
  next: (cursor: string) => Promise<LedgerPage>,
): Promise<void> {
  const day = new Date().toISOString().slice(0, 10);
  res.statusCode = 200;
  res.setHeader(
    'content-type',
    format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
  );
  res.setHeader('content-disposition', `attachment; filename="usage-${day}.${format}"`);
  res.setHeader('cache-control', 'no-store');
  if (format === 'csv') {
    // Each row starts with its line break: the file ends without an empty last record.
    res.write(CSV_COLUMNS.join(','));
  }
  let page = first;
  try {
    for (;;) {
      if (res.destroyed) {
        return;
      }
      if (!res.write(lines(format, page))) {
        await drained(res);
      }
      if (page.next === undefined) {
        break;
      }
      page = await next(page.next);
    }
  } catch (err) {
    logger.warn(`usage export cut short: ${(err as Error).message}`);
    res.destroy();
    return;
  }
  res.end();
}

/** Until the socket takes more, or closes; leaves no listener behind (pages are many). */
async function drained(res: ServerResponse): Promise<void> {
  const done = new AbortController();
  const { signal } = done;
  try {
    await Promise.race([once(res, 'drain', { signal }), once(res, 'close', { signal })]);
  } finally {
    done.abort();
  }
}
