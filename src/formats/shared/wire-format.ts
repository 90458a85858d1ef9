import type { ExceptionFilter, Type } from '@nestjs/common';
import type { ErrorEnvelope } from '../../common/errors/envelopes';
import type { ParamNames, WireFormat } from '../../core/canonical';
import type { AnswerKind } from '../../upstream/upstream-body';
import type { GenerationAdapter, GenerationBody } from './generation.adapter';

/** The OpenAPI operation of a format's generation endpoint (names of component schemas). */
export interface WireFormatOpenApi {
  summary: string;
  /** The operation's tag (the API family). */
  tag: string;
  /** Schema names in the document's components: the request, the JSON answer, one SSE event. */
  request: string;
  answer: string;
  event: string;
}

/**
 * One wire format as the gateway knows it, as a provider descriptor does for a provider:
 * everything about it that is not its code lives here, in its own folder, and the format is
 * one line in WIRE_FORMATS (src/formats/wire-formats.ts). See docs/architecture.md,
 * "Adding a wire format".
 */
export interface WireFormatDescriptor<B extends GenerationBody = GenerationBody> {
  /**
   * Its one name: the catalog's `endpoints`, key scopes (older spellings are aliases in
   * key-policy.ts), the ledger's `endpoint`, and `CanonicalRequest.source`.
   */
  name: WireFormat;
  /** The route of its generation endpoint (its controller's prefix), without a leading slash. */
  path: string;
  /** The error envelope of every answer under `path`, rendered by `filter`. */
  envelope: ErrorEnvelope;
  filter: Type<ExceptionFilter>;
  /** What an unstreamed upstream answer of this API must look like on the native path. */
  answer: AnswerKind;
  /** Its names for the canonical fields, in errors and `x-gateway-dropped-params`. */
  params: ParamNames;
  openapi: WireFormatOpenApi;
  /** How the generation pipeline admits and serves it. */
  adapter: GenerationAdapter<B>;
}
