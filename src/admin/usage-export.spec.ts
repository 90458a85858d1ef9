import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LedgerPage, LedgerRow } from '../usage/ledger-row';
import { csvCell, exportFormat, streamExport } from './usage-export';

function row(i: number): LedgerRow & { id: string } {
  return {
    id: String(i),
    rowId: `row-${i}`,
    createdAt: new Date(i * 1000),
    requestId: i === 1 ? '=HYPERLINK("x")' : `req-${i}`,
    keyId: 'key_a',
    team: null,
    endpoint: 'chat.completions',
    method: 'POST',
    modelRequested: 'm',
    model: 'm',
    provider: 'p',
    status: 200,
    outcome: 'completed',
    stream: false,
    inputTokens: 1,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 1,
    reasoningTokens: 0,
    costPico: 0n,
    costEstimated: false,
    protectionCostPico: 0n,
    latencyMs: 1,
    ttftMs: null,
    protections: null,
    errorCode: null,
    cached: false,
  };
}

/** Serves one export of `pages` (page i's cursor is `String(i + 1)`) and returns its body. */
async function exported(format: 'csv' | 'jsonl', pages: LedgerPage[]): Promise<string> {
  const server = createServer((_req, res) => {
    void streamExport(res, format, pages[0], (cursor) => Promise.resolve(pages[Number(cursor)]));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    return await (await fetch(`http://127.0.0.1:${port}/`)).text();
  } finally {
    server.close();
  }
}

describe('usage export', () => {
  it('quotes what would split a cell, and neutralises spreadsheet formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('=1+1')).toBe(`"'=1+1"`);
    expect(csvCell('-2')).toBe(`"'-2"`);
    expect(csvCell(null)).toBe('');
    expect(csvCell(42)).toBe('42');
  });

  it('takes csv by default, jsonl on request, and refuses anything else', () => {
    expect(exportFormat(undefined)).toBe('csv');
    expect(exportFormat('jsonl')).toBe('jsonl');
    expect(() => exportFormat('xlsx')).toThrow("Invalid 'format'");
    expect(() => exportFormat(['csv', 'csv'])).toThrow("Invalid 'format'");
  });

  it('writes every page in order, each row once', async () => {
    // 2,000-row pages: more than a socket buffer, so the writer waits for drains.
    const pages: LedgerPage[] = [0, 1, 2].map((p) => ({
      rows: Array.from({ length: 2000 }, (_, i) => row(p * 2000 + i)),
      next: p < 2 ? String(p + 1) : undefined,
    }));
    const csv = (await exported('csv', pages)).split('\r\n');
    expect(csv[0].startsWith('created_at,request_id,')).toBe(true);
    expect(csv).toHaveLength(6001);
    expect(csv[2].split(',')[1]).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csv[6000].split(',')[1]).toBe('req-5999');
    const jsonl = (await exported('jsonl', pages)).split('\n').filter((l) => l !== '');
    expect(jsonl.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(
      Array.from({ length: 6000 }, (_, i) => String(i)),
    );
  });
});
