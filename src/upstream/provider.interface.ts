import type { Observable } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../catalog/catalog.types';
import type { ProviderDescriptor } from '../catalog/provider-kind';
import type { CanonicalEvent, CanonicalRequest, WireFormat } from '../core/canonical';
import type { FlowControl } from '../common/sse/flow-control';
import type { SseFrame } from '../common/sse/sse-writer';
import type { CallSignal } from './call-signal';
import type { AnswerKind } from './upstream-body';

/** Per-call plumbing every provider receives. */
export interface CallContext {
  requestId: string;
  /** Aborted when the client goes away, or when the provider calls `abort()`. */
  signal: CallSignal;
  /** Cancels the upstream call (e.g. when a stream's subscriber unsubscribes). */
  abort: () => void;
  flow: FlowControl;
  /** Client headers a provider may forward (e.g. `anthropic-version`, `anthropic-beta`). */
  clientHeaders: Record<string, string | string[] | undefined>;
  /**
   * Client fields a translated call could not honour and dropped; `generate` fills it
   * synchronously, before any event, for the `x-gateway-dropped-params` header.
   */
  droppedParams?: string[];
}

/** A client body forwarded as-is to the provider's native API of the same format. */
export interface PassthroughCall {
  model: CatalogModel;
  format: WireFormat;
  /** What an unstreamed answer must be (the format's descriptor says). */
  answer: AnswerKind;
  /** Serialized body to send (model id already mapped). */
  body: string | Buffer;
  stream: boolean;
  ctx: CallContext;
}

/** A GET or DELETE of a resource the provider stores (e.g. a Responses API response). */
export interface ResourceCall {
  method: 'GET' | 'DELETE';
  /** Path below the provider's base URL, already encoded, query string included. */
  path: string;
  ctx: CallContext;
}

/**
 * A native answer: a non-streamed one as its bytes and the same parsed (already checked
 * to be an answer of its API: callers parse nothing again), or a stream's frames.
 */
export type PassthroughResult =
  | {
      kind: 'json';
      status: number;
      body: Buffer;
      value: Record<string, unknown>;
      contentType: string;
    }
  | { kind: 'stream'; frames: Observable<SseFrame> };

/**
 * One configured upstream (a catalog provider entry) as the gateway calls it.
 * `passthrough` serves the fast path; `generate` serves the translation path in
 * canonical terms.
 */
export interface UpstreamProvider {
  readonly config: CatalogProvider;
  /** What its kind speaks and serves natively (routing reads it). */
  readonly descriptor: ProviderDescriptor;
  /** Forwards a native body; resolves once the upstream answered 2xx (rejects otherwise). */
  passthrough?(call: PassthroughCall): Promise<PassthroughResult>;
  /**
   * Forwards a GET/DELETE of a stored resource; resolves once the upstream answered 2xx
   * (rejects otherwise). An SSE answer comes back as frames.
   */
  resource?(call: ResourceCall): Promise<PassthroughResult>;
  /**
   * Serves a canonical request as a canonical event stream. Translates the request at
   * once (a parameter the upstream cannot honour throws a 400 here, before any call) and
   * sends it on subscription.
   */
  generate?(
    request: CanonicalRequest,
    model: CatalogModel,
    ctx: CallContext,
  ): Observable<CanonicalEvent>;
  /**
   * Counts a Messages body's input tokens exactly (Anthropic's `count_tokens`); without it
   * the gateway answers with its own estimate.
   */
  countTokens?(body: string | Buffer, ctx: CallContext): Promise<Record<string, unknown>>;
}

/** A provider that serves the fast path (it can pass a native body through). */
export type RelayingProvider = UpstreamProvider & Pick<Required<UpstreamProvider>, 'passthrough'>;
/** A provider that serves the canonical path (it can generate from a canonical request). */
export type GeneratingProvider = UpstreamProvider & Pick<Required<UpstreamProvider>, 'generate'>;

export function canRelay(provider: UpstreamProvider): provider is RelayingProvider {
  return provider.passthrough !== undefined;
}

export function canGenerate(provider: UpstreamProvider): provider is GeneratingProvider {
  return provider.generate !== undefined;
}

/** Creates providers of one kind; marked with @ProviderDriverFor(descriptor). */
export interface ProviderDriver {
  create(config: CatalogProvider): UpstreamProvider;
}

/** The frames of a streamed call's result (providers answer a streamed call with frames). */
export function framesOf(result: PassthroughResult): Observable<SseFrame> {
  if (result.kind !== 'stream') {
    throw new Error('a streamed upstream call resolved with a JSON answer');
  }
  return result.frames;
}
