import { Logger } from '@nestjs/common';
import type { EventStreamCodec, Message } from '@smithy/core/event-streams';
import { createParser } from 'eventsource-parser';
import { Observable } from 'rxjs';
import type { StreamFraming } from '../catalog/provider-kind';
import { own } from '../common/own';
import type { FlowControl } from '../common/sse/flow-control';
import type { SseFrame } from '../common/sse/sse-writer';
import type { UpstreamResponse } from './upstream-body';
import { malformedEventError, mapTransportError, upstreamTooLargeError } from './upstream-errors';
import type { CallSignal } from './call-signal';

export interface SseSourceOptions {
  flow: FlowControl;
  /** Cancels the upstream request (the call context's abort). */
  abort: () => void;
  signal: CallSignal;
  providerName: string;
  /** For log lines. */
  requestId: string;
  /** Largest single event; a longer one fails the stream and drops the connection. */
  maxEventBytes: number;
  /** Applied to the data of the upstream's own error frames only, never to healthy ones. */
  redact: (text: string) => string;
  /**
   * The frames are relayed as they are (the fast path): a data line that is neither
   * `[DONE]` nor shaped like a JSON object fails the stream instead of reaching a client
   * SDK that would throw on it. The canonical path parses every frame and checks itself.
   */
  relayed: boolean;
  /**
   * `sse` (the default); `json-lines`: one JSON value per line, each a frame's data; or
   * `aws-eventstream`: binary AWS event-stream messages (Amazon Bedrock's streams).
   */
  framing?: StreamFraming;
}

/** Body bytes in, frames out through the callbacks it was made with. */
interface FrameParser {
  feed(chunk: Buffer): void;
  /** The body ended: whatever is still buffered is dispatched or fails the stream. */
  end(): void;
}

/** A text parser over the body's bytes. */
function overText(parser: { feed(text: string): void }): FrameParser {
  // undici's body ignores setEncoding; a streaming decoder keeps split UTF-8 intact.
  const decoder = new TextDecoder();
  return {
    feed: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })),
    // A last event without its blank line still counts: the extra blank lines dispatch
    // it, and are a no-op after a properly terminated stream.
    end: () => parser.feed(`${decoder.decode()}\n\n`),
  };
}

/**
 * A JSON-lines parser (Ollama-style streams): each non-blank line is a frame's data. An
 * unfinished line longer than `maxBufferSize` is an error, as in the SSE parser.
 */
function createLineParser(opts: {
  maxBufferSize: number;
  onEvent(event: { event?: string; data: string }): void;
  onTooLarge(): void;
}): { feed(text: string): void } {
  let pending = '';
  return {
    feed(text) {
      pending += text;
      let at = pending.indexOf('\n');
      while (at >= 0) {
        const line = pending.slice(0, at).trim();
        pending = pending.slice(at + 1);
        if (line !== '') {
          opts.onEvent({ data: line });
        }
        at = pending.indexOf('\n');
      }
      if (pending.length > opts.maxBufferSize) {
        opts.onTooLarge();
      }
    },
  };
}

/** The prelude's first field: the message's total length, big-endian. */
const TOTAL_LENGTH_BYTES = 4;
let codec: EventStreamCodec | undefined;

/**
 * Decodes and checks one whole message (both CRCs, the headers); stateless. Loaded on the
 * first event-stream answer: only Bedrock sends one, and `@smithy/core` is ~2 MB of heap
 * and tens of ms of cold start for every other deployment.
 */
function eventStreamCodec(): EventStreamCodec {
  if (codec === undefined) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const events =
      require('@smithy/core/event-streams') as typeof import('@smithy/core/event-streams');
    const serde = require('@smithy/core/serde') as typeof import('@smithy/core/serde');
    /* eslint-enable @typescript-eslint/no-require-imports */
    codec = new events.EventStreamCodec(serde.toUtf8, serde.fromUtf8);
  }
  return codec;
}

function stringHeader(message: Message, name: string): string | undefined {
  const header = own(message.headers, name);
  return header?.type === 'string' ? header.value : undefined;
}

/**
 * The frame of one decoded message: `:event-type` and the payload. An `exception` (the
 * service's modelled error: `:exception-type`, payload `{"message":…}`) or an `error`
 * (`:error-code`, `:error-message`) becomes an `error` event in the shape the error
 * readers know, `{"type":"error","error":{"type":…,"message":…}}`.
 */
function eventStreamFrame(message: Message): { event?: string; data: string } {
  const payload = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.length);
  const text = payload.toString('utf8');
  const kind = stringHeader(message, ':message-type');
  if (kind !== 'exception' && kind !== 'error') {
    return { event: stringHeader(message, ':event-type'), data: text };
  }
  let said: unknown;
  try {
    said = (JSON.parse(text) as { message?: unknown } | null)?.message;
  } catch {
    said = undefined;
  }
  const error =
    kind === 'exception'
      ? {
          type: stringHeader(message, ':exception-type') ?? 'exception',
          message: typeof said === 'string' ? said : text,
        }
      : {
          type: stringHeader(message, ':error-code') ?? 'error',
          message: stringHeader(message, ':error-message') ?? text,
        };
  return { event: 'error', data: JSON.stringify({ type: 'error', error }) };
}

/**
 * An AWS event-stream parser (Amazon Bedrock's `application/vnd.amazon.eventstream`): the
 * bytes of a message are gathered across chunks until its declared total length is in,
 * then `@smithy/core`'s codec checks and decodes it. A message declared longer than
 * `maxBufferSize` is refused before its bytes arrive, so memory stays at the cap; a CRC
 * mismatch, a malformed message or a body that ends inside one is `onMalformed`.
 */
function createEventStreamParser(opts: {
  maxBufferSize: number;
  onEvent(event: { event?: string; data: string }): void;
  onTooLarge: () => void;
  onMalformed: () => void;
}): FrameParser {
  // Chunks are joined once per message, not once per chunk: a large message costs one copy.
  let chunks: Buffer[] = [];
  let size = 0;
  let failed = false;
  const fail = (report: () => void): void => {
    failed = true;
    chunks = [];
    size = 0;
    report();
  };
  return {
    feed(chunk) {
      if (failed) {
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      while (size >= TOTAL_LENGTH_BYTES) {
        if (chunks[0].length < TOTAL_LENGTH_BYTES) {
          chunks = [Buffer.concat(chunks, size)];
        }
        const total = chunks[0].readUInt32BE(0);
        if (total > opts.maxBufferSize) {
          fail(opts.onTooLarge);
          return;
        }
        if (size < total) {
          return;
        }
        const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
        const rest = all.subarray(total);
        chunks = rest.length > 0 ? [rest] : [];
        size = rest.length;
        // Outside the try: a codec that fails to load is not a malformed upstream message.
        const codec = eventStreamCodec();
        let message: Message;
        try {
          // A total under the 16-byte minimum throws here too, so the loop always advances.
          message = codec.decode(all.subarray(0, total));
        } catch {
          fail(opts.onMalformed);
          return;
        }
        opts.onEvent(eventStreamFrame(message));
      }
    },
    end() {
      if (!failed && size > 0) {
        fail(opts.onMalformed);
      }
    },
  };
}

/**
 * A frame that may carry upstream error text, to be redacted: `event: error` (Messages,
 * Responses), `event: response.failed`, or any data with an `"error"` key or value,
 * wherever it stands (`{"error":…}` of chat, `{"type":"error"}` without an event name,
 * OpenRouter's chunk with a trailing `"error"`, vLLM's `"object":"error"`). Text inside a
 * JSON string has its quotes escaped, so a delta that merely says "error" does not match:
 * a healthy frame costs one substring search.
 */
export function isErrorFrame(event: string | undefined, data: string): boolean {
  return event === 'error' || event === 'response.failed' || data.includes('"error"');
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/**
 * True when `data` starts with `{` and ends with `}` (JSON whitespace aside): catches
 * garbage and cut-off frames at the cost of two character reads. A full JSON.parse per
 * frame (about 0.7 µs for a typical chunk) would also catch a frame that is broken inside
 * its braces; the relays do parse the frames they need.
 */
export function looksLikeJsonObject(data: string): boolean {
  let start = 0;
  let end = data.length - 1;
  while (start <= end && isWhitespace(data.charCodeAt(start))) {
    start++;
  }
  while (end > start && isWhitespace(data.charCodeAt(end))) {
    end--;
  }
  return data.charCodeAt(start) === 0x7b && data.charCodeAt(end) === 0x7d && end > start;
}

/** Event names are upstream text too: only a plain name goes into a log line. */
const PLAIN_NAME = /^[\w.-]{1,64}$/;
const logger = new Logger('UpstreamStream');

/**
 * Logs an upstream event that is not JSON: which request, provider and event, and its
 * size, never its content (it may quote anything, secrets included).
 */
export function logMalformedEvent(
  requestId: string,
  providerName: string,
  event: string | undefined,
  length: number,
): void {
  const name = event !== undefined && PLAIN_NAME.test(event) ? event : '-';
  logger.warn(
    `request ${requestId}: upstream '${providerName}' sent a stream event that is not JSON (event ${name}, ${length} chars); the stream ends with upstream_malformed_event`,
  );
}

/**
 * The upstream's SSE body as an Observable of frames. Unsubscribing before the body ends
 * aborts the upstream request (through `abort`) and destroys the socket's body. An event
 * over `maxEventBytes`, or (relayed) one that is not JSON, fails the stream with a typed
 * 502 and drops the connection; the upstream's own error frames come out redacted.
 */
export function sseFrames(res: UpstreamResponse, opts: SseSourceOptions): Observable<SseFrame> {
  return new Observable<SseFrame>((subscriber) => {
    const body = res.body;
    let ended = false;
    const fail = (error: Error): void => {
      if (ended) {
        return;
      }
      ended = true;
      // Dropping the socket is what aborts the upstream call; our signal stays for the client.
      body.destroy();
      subscriber.error(error);
    };
    const tooLarge = (): void =>
      fail(upstreamTooLargeError(opts.providerName, 'stream event', opts.maxEventBytes));
    const onEvent = (event: { event?: string; data: string }): void => {
      if (ended) {
        return;
      }
      let data = event.data;
      if (data === '') {
        // An empty `data:` line carries nothing: dropped, as every SSE client would.
        return;
      }
      if (opts.relayed && data !== '[DONE]' && !looksLikeJsonObject(data)) {
        logMalformedEvent(opts.requestId, opts.providerName, event.event, data.length);
        fail(malformedEventError(opts.providerName));
        return;
      }
      if (isErrorFrame(event.event, data)) {
        data = opts.redact(data);
      }
      subscriber.next(event.event === undefined ? { data } : { event: event.event, data });
    };
    const parser: FrameParser =
      opts.framing === 'aws-eventstream'
        ? createEventStreamParser({
            maxBufferSize: opts.maxEventBytes,
            onEvent,
            onTooLarge: tooLarge,
            onMalformed() {
              logger.warn(
                `request ${opts.requestId}: upstream '${opts.providerName}' sent an event-stream message that does not decode (CRC mismatch, malformed or cut off); the stream ends with upstream_malformed_event`,
              );
              fail(malformedEventError(opts.providerName));
            },
          })
        : overText(
            opts.framing === 'json-lines'
              ? createLineParser({
                  maxBufferSize: opts.maxEventBytes,
                  onEvent,
                  onTooLarge: tooLarge,
                })
              : createParser({
                  // Bounds what an unfinished line or event may hold: memory stays at the cap.
                  maxBufferSize: opts.maxEventBytes,
                  onError(error) {
                    if (error.type === 'max-buffer-size-exceeded') {
                      tooLarge();
                    }
                    // Other parse errors are lines the SSE grammar says to ignore.
                  },
                  onEvent,
                }),
          );
    body.on('data', (chunk: Buffer) => {
      if (!ended) {
        parser.feed(chunk);
      }
    });
    body.on('end', () => {
      if (ended) {
        return;
      }
      parser.end();
      if (!ended) {
        ended = true;
        subscriber.complete();
      }
    });
    body.on('error', (err) => {
      if (!ended) {
        ended = true;
        subscriber.error(mapTransportError(err, opts.signal));
      }
    });
    opts.flow.attach({ pause: () => body.pause(), resume: () => body.resume() });
    return () => {
      if (!ended) {
        ended = true;
        opts.abort();
        body.destroy();
      }
    };
  });
}
