/** The client side: one keep-alive connection per target, timing and checking each answer. */
import { Pool } from 'undici';
import {
  type CompletionRequest,
  type LatencyCase,
  type SseEvent,
  type StreamCase,
  type StreamRequest,
} from './cases';
import { CHUNK_COUNT, REQUEST_TIMEOUT_MS } from './settings';

export function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

// ---------------------------------------------------------------------------------------
// Client: one keep-alive connection per target for the sequential phases
// ---------------------------------------------------------------------------------------

export interface Target {
  /**
   * `bare`: the bare proxy, `nestProxy`: the Nest floor proxy, `nest`: the bare Nest app
   * (floor.ts); all three get direct's requests.
   */
  name: 'direct' | 'gateway' | 'bare' | 'nest' | 'nestProxy';
  origin: string;
  pool: Pool;
  /** A gateway variant's own name in the report (`PGlite`, `KEY_STORE=off`). */
  label?: string;
  /** Replaces the bearer of every request sent to this target (a variant's own key). */
  authorization?: string;
}

export function target(
  name: Target['name'],
  port: number,
  extra: { label?: string; authorization?: string } = {},
): Target {
  const origin = `http://127.0.0.1:${port}`;
  const pool = new Pool(origin, {
    connections: 1,
    keepAliveTimeout: 120_000,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  return { name, origin, pool, ...extra };
}

/** `headers` with the target's own bearer, when it has one. */
export function headersFor(t: Target, headers: Record<string, string>): Record<string, string> {
  return t.authorization === undefined ? headers : { ...headers, authorization: t.authorization };
}

/** Anomalies seen in answers (wrong shape, missing [DONE], ...), counted by message. */
export type Anomalies = Map<string, number>;

export function note(anomalies: Anomalies, message: string | undefined): void {
  if (message !== undefined) {
    anomalies.set(message, (anomalies.get(message) ?? 0) + 1);
  }
}

export function checkCompletion(text: string, model: string): string | undefined {
  try {
    const body = JSON.parse(text);
    if (body.model !== model || typeof body.choices?.[0]?.message?.content !== 'string') {
      return 'unexpected chat.completion shape';
    }
    if (typeof body.usage?.total_tokens !== 'number') {
      return 'chat.completion without usage';
    }
    return undefined;
  } catch {
    return 'non-JSON chat.completion';
  }
}

export function checkMessage(text: string, model: string): string | undefined {
  try {
    const body = JSON.parse(text);
    if (body.type !== 'message' || body.model !== model || body.content?.[0]?.type !== 'text') {
      return 'unexpected message shape';
    }
    if (typeof body.usage?.output_tokens !== 'number') {
      return 'message without usage';
    }
    return undefined;
  } catch {
    return 'non-JSON message';
  }
}

/**
 * Which request of a case one leg of its rounds sends: `direct`, to the upstream; `gateway`,
 * the case's own request; `unprotected`, a protected case's request without the tool,
 * also to the gateway.
 */
export type Leg = 'direct' | 'gateway' | 'unprotected';

/** The gateway sends its case's own request; every other target (direct, the floor) direct's. */
export function defaultLeg(t: Target): Leg {
  return t.name === 'gateway' ? 'gateway' : 'direct';
}

export function legRequest<R>(c: R & { direct?: R; unprotected?: R }, leg: Leg): R {
  const other = leg === 'direct' ? c.direct : leg === 'unprotected' ? c.unprotected : undefined;
  return other ?? c;
}

/** One non-streamed request: ms from send to the last byte of the body. */
export async function timeCompletion(
  t: Target,
  c: LatencyCase,
  anomalies: Anomalies,
  check: boolean,
  leg: Leg = defaultLeg(t),
): Promise<number> {
  const spec: CompletionRequest = legRequest<CompletionRequest>(c, leg);
  const start = process.hrtime.bigint();
  const res = await t.pool.request({
    path: spec.path,
    method: 'POST',
    headers: headersFor(t, spec.headers),
    body: spec.body,
  });
  const text = await res.body.text();
  const ms = elapsedMs(start);
  if (res.statusCode !== 200) {
    throw new Error(`${leg} ${c.name} answered HTTP ${res.statusCode}: ${text.slice(0, 500)}`);
  }
  if (check) {
    const problem = spec.check(text) ?? checkProtections(spec.protections, res.headers);
    note(anomalies, problem === undefined ? undefined : `${leg} ${c.name}: ${problem}`);
  }
  return ms;
}

export const PROTECTIONS_HEADER = 'x-gateway-protections';

/**
 * What is missing from the final verdicts of a protected request (the trailer of a stream,
 * which carries the outgoing protections' verdicts once the answer is done; else the
 * header), or undefined.
 */
export function checkProtections(
  expected: string[] | undefined,
  headers: Record<string, string | string[] | undefined>,
  trailers: Record<string, string> = {},
): string | undefined {
  if (expected === undefined) {
    return undefined;
  }
  const raw = trailers[PROTECTIONS_HEADER] ?? headers[PROTECTIONS_HEADER];
  const value = Array.isArray(raw) ? raw.join(', ') : (raw ?? '');
  const missing = expected.filter((v) => !value.split(/,\s*/).some((p) => p.startsWith(v)));
  return missing.length === 0
    ? undefined
    : `${PROTECTIONS_HEADER} is '${value}', without ${missing.join(', ')}`;
}

export interface StreamTiming {
  /** Request start to the end of the first event that carries content. */
  ttftMs: number;
  /** Request start to the end of the body. */
  totalMs: number;
}

/**
 * An SSE decoder as the SDKs implement it: `event:` and `data:` lines accumulate until a
 * blank line dispatches the event; comments (`: keepalive`) and other fields are ignored.
 */
export class SseDecoder {
  private pending = '';
  private event: string | undefined;
  private data: string[] = [];

  constructor(private readonly onEvent: (e: SseEvent) => void) {}

  push(text: string): void {
    this.pending += text;
    let newline = this.pending.indexOf('\n');
    while (newline >= 0) {
      this.line(this.pending.slice(0, newline).replace(/\r$/, ''));
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf('\n');
    }
  }

  /** End of the body: a last event without its blank line still counts. */
  end(): void {
    if (this.pending !== '') {
      this.line(this.pending);
      this.pending = '';
    }
    this.line('');
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        this.onEvent(toSseEvent(this.event, this.data.join('\n')));
      }
      this.event = undefined;
      this.data = [];
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') {
      this.event = value;
    } else if (field === 'data') {
      this.data.push(value);
    }
  }
}

export function toSseEvent(event: string | undefined, data: string): SseEvent {
  if (data === '[DONE]') {
    return { event, data, malformed: false };
  }
  try {
    const json: unknown = JSON.parse(data);
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
      return { event, data, json: json as SseEvent['json'], malformed: false };
    }
  } catch {
    // reported below
  }
  return { event, data, malformed: true };
}

/** The event's type: its `event:` line, else the JSON `type`. */
export function eventType(e: SseEvent): string | undefined {
  const type: unknown = e.json?.type;
  return e.event ?? (typeof type === 'string' ? type : undefined);
}

export function isChatContent(e: SseEvent): boolean {
  // The empty role chunk that opens the stream does not count.
  const content: unknown = e.json?.choices?.[0]?.delta?.content;
  return typeof content === 'string' && content !== '';
}

export function isResponsesContent(e: SseEvent): boolean {
  return eventType(e) === 'response.output_text.delta';
}

export function isMessagesContent(e: SseEvent): boolean {
  return eventType(e) === 'content_block_delta';
}

/** Checks shared by every format: JSON data, and `event:` lines that match the JSON type. */
export function checkSseEvents(events: SseEvent[]): string | undefined {
  if (events.some((e) => e.malformed)) {
    return 'data: lines that are not JSON';
  }
  const mismatch = events.find((e) => e.event !== undefined && e.event !== e.json?.type);
  return mismatch ? `event: ${mismatch.event} with data of type ${mismatch.json?.type}` : undefined;
}

export function checkChatStream(
  events: SseEvent[],
  model: string,
  usageExpected: boolean,
): string | undefined {
  const chunks = events.filter((e) => e.json !== undefined);
  if (chunks[0]?.json?.model !== model) {
    return `first chunk's model is ${chunks[0]?.json?.model}, not ${model}`;
  }
  const content = events.filter(isChatContent).length;
  if (content !== CHUNK_COUNT) {
    return `${content} content chunks instead of ${CHUNK_COUNT}`;
  }
  if (events[events.length - 1]?.data !== '[DONE]') {
    return 'stream without a final data: [DONE]';
  }
  const usage = chunks.filter((e) => Array.isArray(e.json?.choices) && e.json.choices.length === 0);
  if (!usageExpected) {
    // The client did not ask for usage, so no usage chunk may reach it.
    return usage.length > 0 ? 'usage chunk sent though not requested' : undefined;
  }
  const last = chunks[chunks.length - 1];
  return usage.length === 1 &&
    usage[0] === last &&
    typeof last.json?.usage?.total_tokens === 'number'
    ? undefined
    : 'no final usage chunk though requested';
}

/** wire-formats.md 3.4 to 3.6: named events, sequence numbers 0, 1, 2, ..., one terminal. */
export function checkResponsesStream(events: SseEvent[], model: string): string | undefined {
  if (events.some((e) => e.event === undefined)) {
    return 'event without an event: line';
  }
  const gap = events.findIndex((e, i) => e.json?.sequence_number !== i);
  if (gap >= 0) {
    return `event ${gap} has sequence_number ${events[gap].json?.sequence_number}`;
  }
  const first = events[0];
  const last = events[events.length - 1];
  if (first?.event !== 'response.created' || first.json?.response?.model !== model) {
    return `stream opens with ${first?.event} (model ${first?.json?.response?.model}), not response.created (model ${model})`;
  }
  const deltas = events.filter(isResponsesContent).length;
  if (deltas !== CHUNK_COUNT) {
    return `${deltas} response.output_text.delta events instead of ${CHUNK_COUNT}`;
  }
  if (last?.event !== 'response.completed') {
    return `stream ends with ${last?.event}, not response.completed`;
  }
  if (typeof last.json?.response?.usage?.total_tokens !== 'number') {
    return 'response.completed without usage';
  }
  return last.json?.response?.model === model ? undefined : 'response.completed with another model';
}

/** wire-formats.md 4.6: message_start, the blocks, message_delta with usage, message_stop. */
export function checkMessagesStream(events: SseEvent[], model: string): string | undefined {
  if (events.some((e) => e.event === undefined)) {
    return 'event without an event: line';
  }
  const first = events[0];
  if (first?.event !== 'message_start' || first.json?.message?.model !== model) {
    return `stream opens with ${first?.event} (model ${first?.json?.message?.model}), not message_start (model ${model})`;
  }
  const deltas = events.filter(
    (e) => isMessagesContent(e) && e.json?.delta?.type === 'text_delta',
  ).length;
  if (deltas !== CHUNK_COUNT) {
    return `${deltas} text_delta events instead of ${CHUNK_COUNT}`;
  }
  const messageDelta = events.find((e) => e.event === 'message_delta');
  if (typeof messageDelta?.json?.usage?.output_tokens !== 'number') {
    return 'no message_delta with usage';
  }
  const last = events[events.length - 1];
  return last?.event === 'message_stop' ? undefined : `stream ends with ${last?.event}`;
}

/** One streamed request, read to the end; the clock stops at the first content event. */
export async function timeStream(
  t: Target,
  c: StreamCase,
  anomalies: Anomalies,
  leg: Leg = defaultLeg(t),
): Promise<StreamTiming> {
  const spec: StreamRequest = legRequest<StreamRequest>(c, leg);
  const start = process.hrtime.bigint();
  const res = await t.pool.request({
    path: spec.path,
    method: 'POST',
    headers: headersFor(t, spec.headers),
    body: spec.body,
  });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    throw new Error(`${leg} ${c.name} stream: HTTP ${res.statusCode}: ${text.slice(0, 500)}`);
  }
  const events: SseEvent[] = [];
  let firstContentAt: bigint | undefined;
  const decoder = new SseDecoder((e) => {
    events.push(e);
    if (firstContentAt === undefined && spec.isContentEvent(e)) {
      firstContentAt = process.hrtime.bigint();
    }
  });
  res.body.setEncoding('utf8');
  for await (const piece of res.body) {
    decoder.push(piece as string);
  }
  decoder.end();
  const totalMs = elapsedMs(start);
  const problem =
    checkSseEvents(events) ??
    spec.check(events) ??
    checkProtections(spec.protections, res.headers, res.trailers);
  note(anomalies, problem === undefined ? undefined : `${leg} ${c.name} stream: ${problem}`);
  const ttftMs = firstContentAt === undefined ? NaN : Number(firstContentAt - start) / 1e6;
  return { ttftMs, totalMs };
}

/**
 * Runs `count` rounds of the legs in order (A, B, A, B, ... or A, B, C, A, B, C, ...),
 * strictly one request at a time; returns each leg's samples.
 */
export async function interleave<T>(count: number, legs: (() => Promise<T>)[]): Promise<T[][]> {
  const out = legs.map((): T[] => []);
  for (let i = 0; i < count; i++) {
    for (const [j, leg] of legs.entries()) {
      out[j].push(await leg());
    }
  }
  return out;
}
