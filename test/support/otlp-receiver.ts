import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as the OTLP/HTTP JSON export carries it, attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  events: string[];
  status?: { code?: number };
  resource: Record<string, string | number | boolean>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'attributes' | 'events' | 'resource'> & {
        attributes?: OtlpAttribute[];
        events?: { name: string }[];
      })[];
    }[];
  }[];
}

function flatten(attributes: OtlpAttribute[] = []): Record<string, string | number | boolean> {
  const out = new Map<string, string | number | boolean>();
  for (const { key, value } of attributes) {
    const v =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      value.boolValue;
    if (v !== undefined) {
      out.set(key, v);
    }
  }
  return Object.fromEntries(out);
}

/**
 * A real OTLP/HTTP trace receiver: accepts `POST /v1/traces` with the JSON encoding the
 * exporter sends, decodes it, and keeps the spans and the raw bodies.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly bodies: string[] = [];
  private server?: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        if (!String(req.headers['content-type']).startsWith('application/json')) {
          res.writeHead(415).end();
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
        this.bodies.push(body);
        this.decode(JSON.parse(body) as OtlpExport);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private decode(payload: OtlpExport): void {
    for (const rs of payload.resourceSpans ?? []) {
      const resource = flatten(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          this.spans.push({
            ...span,
            parentSpanId: span.parentSpanId || undefined,
            attributes: flatten(span.attributes),
            events: (span.events ?? []).map((e) => e.name),
            resource,
          });
        }
      }
    }
  }
}
