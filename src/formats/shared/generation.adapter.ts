import type { Observable } from 'rxjs';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayError } from '../../common/errors/gateway-errors';
import type { GatewayRequest } from '../../common/request-context';
import type { SseFrame } from '../../common/sse/sse-writer';
import type {
  CanonicalEvent,
  CanonicalRequest,
  CanonicalResponse,
  CanonicalUsage,
} from '../../core/canonical';
import type { StreamDecoder } from '../../upstream/canonical-call';
import type { GenerationFacts } from './generation.guard';
import type { RequestPlan } from './request-plan';

/** What every generation body has, whatever its format (validation guarantees it). */
export interface GenerationBody {
  model: string;
  stream?: boolean | null;
}

/**
 * One wire format as the generation pipeline drives it: the admission facts (validation,
 * rule S1, what the limits and protections read), and pure pieces for each path. The
 * pipeline owns the sequence; an adapter holds no state, injects nothing and never changes
 * the body it is given (the request's plan is frozen: a rewrite is a copy), so adding a
 * format is one adapter and its controller.
 */
export interface GenerationAdapter<
  B extends GenerationBody = GenerationBody,
> extends GenerationFacts<B> {
  /**
   * Throws the 400 for what the canonical path cannot honour (a forced hosted tool,
   * server-held state, fields the canonical answer cannot carry) and returns what it drops
   * (hosted tools merely offered to a translated model), for `x-gateway-dropped-params`.
   * `protectedBy`: the names of the outgoing protections that put the request on this
   * path, if they did; there a hosted tool is a 400 too.
   */
  checkCanonical(body: B, model: CatalogModel, protectedBy: string | undefined): string[];
  decode(body: B): CanonicalRequest;
  /**
   * The unstreamed canonical answer as the format's JSON body, or a promise of it when
   * making it involves I/O (a store write the answer waits for).
   */
  toJson(response: CanonicalResponse, body: B, modelId: string, req: GatewayRequest): unknown;
  /** A streamed canonical answer's encoder (one per request). */
  encoder(body: B, modelId: string, req: GatewayRequest): FrameEncoder;
  /**
   * The fast path of one attempt on `model` (as its deployment serves it): the body sent
   * upstream, derived from the plan without changing it, and how its answer is relayed.
   */
  native(plan: RequestPlan<B>, model: CatalogModel): NativeCall;
  /** An unstreamed native answer's usage (from its `usage` object). */
  nativeUsage(usage: object): CanonicalUsage;
  /** Whether an unstreamed native answer already names `modelId` (its bytes go as they are). */
  namesModel(answer: Record<string, unknown>, modelId: string): boolean;
  /** What the response cache needs of the format; absent: its answers are never cached. */
  cache?: CacheableFormat<B>;
}

/**
 * The response cache keeps an answer canonical and re-encodes it for each hit, in the
 * client's form (JSON or SSE): it reads the fast path's answers with these decoders.
 */
export interface CacheableFormat<B extends GenerationBody = GenerationBody> {
  /** An unstreamed native answer as canonical events. */
  json(answer: Record<string, unknown>): CanonicalEvent[];
  /** A decoder of the relayed stream's events (each frame's data, parsed). */
  stream(): StreamDecoder;
  /**
   * Whether the answer to `body` may be replayed to another request at all (besides what
   * the canonical answer cannot carry, which `checkCanonical` refuses); default yes.
   */
  replayable?(body: B): boolean;
}

/** Canonical events to the format's SSE frames, for one streamed answer. */
export interface FrameEncoder {
  encode(event: CanonicalEvent): SseFrame[];
  /** Frames closing a completed source (`data: [DONE]`, a final snapshot). */
  end?(): SseFrame[];
  /** A failure after the stream started, as the format's in-stream error. */
  fail(error: GatewayError): SseFrame[];
  /** Wraps the encoded frames (holds the terminal event until a store write is durable). */
  frames?(encoded: Observable<SseFrame>): Observable<SseFrame>;
}

/** The fast path of one request. */
export interface NativeCall {
  /** Serialized body for the upstream: the client's bytes when nothing needs rewriting. */
  payload: string | Buffer;
  /** Relays the upstream's frames (model id, usage accounting); records the usage. */
  frames(upstream: Observable<SseFrame>): Observable<SseFrame>;
  fail(error: GatewayError): SseFrame[];
  /** Sees an unstreamed answer before it is sent; the answer waits until it settles. */
  answered?(answer: Record<string, unknown>): Promise<void>;
}
