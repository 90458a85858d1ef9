import { from } from 'rxjs';
import type { CachedAnswer, CacheTicket, ResponseCache } from '../../cache/response-cache';
import type { CatalogModel } from '../../catalog/catalog.types';
import { sendJson } from '../../common/http/send-json';
import { FlowControl } from '../../common/sse/flow-control';
import { type SseFrame, writeSse } from '../../common/sse/sse-writer';
import { ResponseAccumulator, responseEvents } from '../../core/accumulate';
import type { CanonicalEvent, CanonicalResponse } from '../../core/canonical';
import type { CacheableFormat, GenerationAdapter, GenerationBody } from './generation.adapter';
import type { RequestPlan } from './request-plan';

/** What the response cache names the reason a request's answer cannot be shared. */
const CACHE = 'the response cache';

/**
 * The cache's ticket for a planned request: undefined (and nothing hashed) unless its model
 * opts in, the client did not send `Cache-Control: no-store`, and its answer can be replayed
 * (the format allows it and the canonical answer carries all of it: no `n` > 1, logprobs,
 * audio, hosted tools or server-held conversation state).
 */
export function cacheTicket<B extends GenerationBody>(
  cache: ResponseCache,
  plan: RequestPlan<B>,
  adapter: GenerationAdapter<B>,
): CacheTicket | undefined {
  const model = plan.route.model;
  if (!cache.appliesTo(model) || adapter.cache === undefined) {
    return undefined;
  }
  if (adapter.cache.replayable?.(plan.body) === false || !carried(adapter, plan.body, model)) {
    return undefined;
  }
  return cache.ticket({
    format: adapter.format,
    model,
    candidates: plan.models.map((m) => m.id),
    body: plan.received,
    protections: plan.protections?.active.map((p) => p.protection.name) ?? [],
    key: plan.key,
    headers: plan.req.headers,
  });
}

/** Whether the canonical answer carries everything the client asked for (see checkCanonical). */
function carried<B extends GenerationBody>(
  adapter: GenerationAdapter<B>,
  body: B,
  model: CatalogModel,
): boolean {
  try {
    adapter.checkCanonical(body, model, CACHE);
    return true;
  } catch {
    return false;
  }
}

const NO_USAGE = Object.freeze({ inputTokens: 0, outputTokens: 0 });

/** How much larger than a stored entry a native stream's frames may grow while kept. */
const FRAMES_PER_ENTRY = 8;

/**
 * Answers from the cache in the client's form: the format's JSON body, or its SSE events
 * re-encoded from the stored canonical answer (whichever form the answer first took). The
 * request records no upstream usage: its ledger row costs nothing and its token reservation
 * is given back.
 */
export async function replayCached<B extends GenerationBody>(
  plan: RequestPlan<B>,
  adapter: GenerationAdapter<B>,
  answer: CachedAnswer,
  keepaliveMs: number,
): Promise<void> {
  const { req, res, body } = plan;
  req.ctx.cache = 'hit';
  req.ctx.model = answer.model;
  req.ctx.provider = undefined;
  req.ctx.usage = NO_USAGE;
  res.setHeader('x-gateway-cache', 'hit');
  if (body.stream !== true) {
    // Only stateless answers are cached, so nothing is stored again here; the adapter may
    // still answer through a promise.
    const json: unknown = await adapter.toJson(answer.response, body, answer.model, req);
    sendJson(res, JSON.stringify(json));
    return;
  }
  const encoder = adapter.encoder(body, answer.model, req);
  const frames = responseEvents(answer.response).flatMap((event) => encoder.encode(event));
  if (encoder.end) {
    frames.push(...encoder.end());
  }
  writeSse(res, from(frames), {
    keepaliveMs,
    flow: new FlowControl(),
    errorFrames: (error) => encoder.fail(error),
  });
}

/**
 * Collects the answer of a request the cache missed, as the client receives it, and stores
 * it as its response finishes, only if it completed: a 200 written to its end, with no
 * error (in-stream ones included) and no protection blocking it. Each attempt starts
 * afresh, so a retried or fallen-back attempt leaves nothing behind. Frames of a native
 * stream are only kept as they go and decoded after the response ended.
 */
export class AnswerCapture {
  private model: string | undefined;
  private response: CanonicalResponse | undefined;
  private native: Record<string, unknown> | undefined;
  private events: ResponseAccumulator | undefined;
  private stopped = false;
  private frames: SseFrame[] | undefined;
  private size = 0;
  private dropped = false;

  constructor(
    private readonly cache: ResponseCache,
    private readonly ticket: CacheTicket,
    private readonly format: CacheableFormat,
    private readonly plan: RequestPlan,
  ) {
    // 'finish': the last byte is handed over, before the client can ask again.
    plan.res.once('finish', () => this.settle());
  }

  /** An attempt on `model` starts: whatever an earlier one collected is dropped. */
  begin(model: CatalogModel): void {
    this.model = model.id;
    this.response = undefined;
    this.native = undefined;
    this.events = undefined;
    this.stopped = false;
    this.frames = undefined;
    this.size = 0;
    this.dropped = false;
  }

  /** A whole canonical answer (unstreamed, after the outgoing protections). */
  answered(response: CanonicalResponse): void {
    this.response = response;
  }

  /** A whole native answer (unstreamed fast path), decoded when stored. */
  answeredNative(answer: Record<string, unknown>): void {
    this.native = answer;
  }

  /** One canonical event of a streamed answer, as the encoder gets it. */
  event(event: CanonicalEvent): void {
    (this.events ??= new ResponseAccumulator()).push(event);
    if (event.type === 'message_stop') {
      this.stopped = true;
    }
  }

  /**
   * One relayed frame of a native stream. Frames carry several times their text in JSON
   * envelopes: past {@link FRAMES_PER_ENTRY} times the entry bound the answer is not kept.
   */
  frame(frame: SseFrame): void {
    if (this.dropped) {
      return;
    }
    this.size += frame.data.length;
    if (this.size > FRAMES_PER_ENTRY * this.cache.maxEntryBytes) {
      this.dropped = true;
      this.frames = undefined;
      return;
    }
    (this.frames ??= []).push(frame);
  }

  private settle(): void {
    const { req, res } = this.plan;
    const { ctx } = req;
    const completed =
      res.writableFinished &&
      res.statusCode === 200 &&
      !ctx.errorCode &&
      !(ctx.protections !== undefined && /=blocked\b/.test(ctx.protections));
    if (!completed || this.model === undefined || this.dropped) {
      return;
    }
    let response: CanonicalResponse | undefined;
    try {
      response = this.collected();
    } catch {
      // A stream its decoder calls incomplete, or an answer it cannot read: not stored.
      return;
    }
    if (response === undefined) {
      return;
    }
    // The usage the upstream reported (a relay may have kept its usage chunk from the client).
    if (ctx.usage !== undefined) {
      response.usage = ctx.usage;
    }
    this.cache.store(this.ticket, { model: this.model, response });
  }

  private collected(): CanonicalResponse | undefined {
    if (this.response !== undefined) {
      return this.response;
    }
    if (this.events !== undefined) {
      return this.stopped ? this.events.result() : undefined;
    }
    if (this.native !== undefined) {
      return accumulate(this.format.json(this.native));
    }
    if (this.frames !== undefined) {
      const decoder = this.format.stream();
      const events: CanonicalEvent[] = [];
      for (const frame of this.frames) {
        if (frame.data !== '[DONE]') {
          events.push(...decoder.push(JSON.parse(frame.data) as Record<string, unknown>));
        }
      }
      events.push(...decoder.end());
      return events.some((e) => e.type === 'message_stop') ? accumulate(events) : undefined;
    }
    return undefined;
  }
}

function accumulate(events: readonly CanonicalEvent[]): CanonicalResponse {
  const acc = new ResponseAccumulator();
  for (const event of events) {
    acc.push(event);
  }
  return acc.result();
}
