import type { GatewayError } from '../../common/errors/gateway-errors';
import type { SseFrame } from '../../common/sse/sse-writer';
import { streamIncompleteError } from '../../common/sse/stream-end';
import type { CanonicalUsage } from '../../core/canonical';
import { rewriteModel } from '../chat-completions/chat.passthrough';
import {
  type ResponseObject,
  type ResponsesStreamEvent,
  failureEvents,
  fromResponsesUsage,
} from './responses.wire';
import { escapeRegExp } from '../../common/regexp';

/** Lifecycle events: each carries a `response` snapshot with the model id. */
const LIFECYCLE = new Set([
  'response.created',
  'response.queued',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
]);
/** The events that end a response. */
export const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const SEQUENCE = /"sequence_number"\s*:\s*(\d+)/;

function parse(data: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function typeOf(data: string): string {
  const type = parse(data)?.type;
  return typeof type === 'string' ? type : 'message';
}

/**
 * Relays an upstream Responses stream with the least parsing: events go out in order
 * with their `event:` line and their bytes, except that the model id inside lifecycle
 * snapshots is rewritten to the catalog id (a string replacement). Only two events are
 * parsed: `response.created` (for the snapshot a failure needs) and the terminal one
 * (for usage). A stream that breaks, or ends without a terminal event, is finished with
 * `error` + `response.failed`, continuing the upstream's sequence numbers.
 * One instance per stream.
 */
export class ResponsesRelay {
  private snapshot: Record<string, unknown> | undefined;
  /** Matches the upstream's own `"model":"<id>"`, learned from the first snapshot. */
  private upstreamModel: RegExp | undefined;
  private readonly modelField: string | undefined;
  private lastData: string | undefined;
  private relayed = 0;
  private terminal = false;
  private sawError = false;

  constructor(
    /** Catalog id to report; undefined relays the upstream's model untouched. */
    private readonly model: string | undefined,
    /** The snapshot to report when the upstream failed before `response.created`. */
    private readonly fallbackShell: () => ResponseObject,
    private readonly onUsage: (usage: CanonicalUsage) => void,
    /** Sees the snapshots parsed anyway: the first one and the terminal one. */
    private readonly onSnapshot?: (response: Record<string, unknown>, terminal: boolean) => void,
    /** Sees the id of each output item as it starts (then only is one parsed). */
    private readonly onItem?: (id: string) => void,
  ) {
    this.modelField = model === undefined ? undefined : `"model":${JSON.stringify(model)}`;
  }

  /** The frames to send for one upstream frame (none for a `[DONE]` line). */
  relay(frame: SseFrame): SseFrame[] {
    let data = frame.data;
    if (data === '[DONE]') {
      return [];
    }
    // OpenAI names every event; a server that does not gets the name from the JSON.
    const type = frame.event ?? typeOf(data);
    if (LIFECYCLE.has(type)) {
      data = this.lifecycle(type, data);
    } else if (type === 'response.output_item.added' && this.onItem !== undefined) {
      // Known from here on: a stream cut before its terminal event still has its items owned.
      const id = (parse(data)?.item as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string' && id !== '') {
        this.onItem(id);
      }
    } else if (type === 'error') {
      this.sawError = true;
    }
    this.lastData = data;
    this.relayed++;
    return [{ event: type, data }];
  }

  /** Frames after the upstream ended: none, or a failure when no terminal event came. */
  end(): SseFrame[] {
    return this.fail(streamIncompleteError('response'));
  }

  /** Frames that finish the stream after the upstream failed mid-way. */
  fail(error: GatewayError): SseFrame[] {
    if (this.terminal) {
      return [];
    }
    this.terminal = true;
    const events: ResponsesStreamEvent[] = [];
    let snapshot: object | undefined = this.snapshot;
    let sequence = this.nextSequence();
    if (!snapshot) {
      snapshot = this.fallbackShell();
      if (this.relayed === 0) {
        // Nothing reached the client yet: open the response so the grammar holds.
        events.push({ type: 'response.created', sequence_number: sequence++, response: snapshot });
      }
    }
    const failed = {
      ...snapshot,
      ...(this.model === undefined ? {} : { model: this.model }),
      output: [],
      usage: null,
    };
    // An upstream `error` event already told the client why; only the terminal is missing.
    events.push(...failureEvents(failed, sequence, error, !this.sawError));
    return events.map((e) => ({ event: e.type, data: JSON.stringify(e) }));
  }

  private lifecycle(type: string, data: string): string {
    const terminal = TERMINAL.has(type);
    const event = !this.snapshot || terminal ? parse(data) : undefined;
    const response = event?.response as Record<string, unknown> | undefined;
    if (!this.snapshot && typeof response === 'object' && response !== null) {
      this.snapshot = response;
      if (typeof response.model === 'string') {
        this.upstreamModel = new RegExp(
          `"model"\\s*:\\s*${escapeRegExp(JSON.stringify(response.model))}`,
        );
      }
      if (!terminal) {
        this.onSnapshot?.(response, false);
      }
    }
    if (terminal) {
      this.terminal = true;
      const usage = response?.usage;
      if (typeof usage === 'object' && usage !== null) {
        this.onUsage(fromResponsesUsage(usage));
      }
      if (typeof response === 'object' && response !== null) {
        this.onSnapshot?.(response, true);
      }
    }
    if (this.modelField === undefined) {
      return data;
    }
    return this.upstreamModel
      ? data.replace(this.upstreamModel, this.modelField)
      : rewriteModel(data, this.modelField);
  }

  /** The sequence number after the last relayed event's. */
  private nextSequence(): number {
    const match = this.lastData === undefined ? null : SEQUENCE.exec(this.lastData);
    return match ? Number(match[1]) + 1 : this.relayed;
  }
}
