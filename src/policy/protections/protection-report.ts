import type { GatewayResponse } from '../../common/request-context';

export const PROTECTIONS_HEADER = 'x-gateway-protections';
/** Tokens and cost of the protections' own model calls, never mixed into the client's usage. */
export const PROTECTIONS_USAGE_HEADER = 'x-gateway-protections-usage';

/**
 * What a protection concluded; `pending` only in the headers of a stream still running,
 * `error` when the answer failed before the protection could decide.
 */
export type ReportedVerdict = 'pass' | 'flagged' | 'blocked' | 'redacted' | 'pending' | 'error';

/** Printable ASCII without the header's own separators, at most `max` characters. */
export function headerSafe(text: string, max = 200): string {
  return text
    .replace(/[^\x20-\x7e]+/g, ' ')
    .replace(/[;,"\\]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max);
}

/** Details that are numbers or fixed tokens, never text from the exchange: safe to log. */
const LOGGED_DETAILS = new Set(['score', 'stage', 'leaks', 'detector', 'failed']);

/**
 * The `x-gateway-protections` value of one request: `name=verdict[;key=value]...` per
 * protection, comma-separated, in the order the protections ran. A stream's headers leave
 * before its outgoing protections decide, so they say `pending` there and the final value
 * goes out as an HTTP trailer and an SSE comment (see OutputProtections).
 */
export class ProtectionReport {
  private readonly entries = new Map<string, string>();
  /** The same entries without free-text details: for logs, which never carry content. */
  private readonly bare = new Map<string, string>();
  private readonly pending = new Set<string>();

  set(name: string, verdict: ReportedVerdict, details: Record<string, string | number> = {}): void {
    let entry = `${name}=${verdict}`;
    let bare = entry;
    for (const [key, value] of Object.entries(details)) {
      const text = String(value);
      // Tokens as they are (`score=0.91`), free text quoted (`reason="off-topic answer"`).
      entry += /^[\w.:/-]+$/.test(text) ? `;${key}=${text}` : `;${key}="${headerSafe(text)}"`;
      if (LOGGED_DETAILS.has(key)) {
        bare += `;${key}=${text}`;
      }
    }
    this.entries.set(name, entry);
    this.bare.set(name, bare);
    if (verdict === 'pending') {
      this.pending.add(name);
    } else {
      this.pending.delete(name);
    }
  }

  /** Gives every protection still `pending` this verdict. */
  settlePending(verdict: Exclude<ReportedVerdict, 'pending'>): void {
    for (const name of [...this.pending]) {
      this.set(name, verdict);
    }
  }

  get empty(): boolean {
    return this.entries.size === 0;
  }

  /**
   * The header value; `withText: false` leaves out free-text details (a judge's reason may
   * quote the prompt), for the access log.
   */
  toString(withText = true): string {
    return [...(withText ? this.entries : this.bare).values()].join(', ');
  }

  /** Sets the header unless the response already started. */
  writeTo(res: GatewayResponse): void {
    if (!this.empty && !res.headersSent) {
      res.setHeader(PROTECTIONS_HEADER, this.toString());
    }
  }
}
