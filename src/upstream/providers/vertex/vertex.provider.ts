import { headerValue } from '../../../common/http/header-value';
import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import { type ProviderDescriptor, ProviderDriverFor } from '../../../catalog/provider-kind';
import { own } from '../../../common/own';
import type { CanonicalEvent, CanonicalRequest } from '../../../core/canonical';
import { canonicalCall } from '../../canonical-call';
import type {
  CallContext,
  PassthroughCall,
  PassthroughResult,
  ProviderDriver,
  UpstreamProvider,
} from '../../provider.interface';
import { Redactor } from '../../redactor';
import { upstreamHttpError } from '../../upstream-body';
import { UpstreamHttpClient, type UpstreamResponse } from '../../upstream-http.client';
import { AnthropicStreamDecoder, fromAnthropicMessage } from '../anthropic/from-anthropic';
import { toAnthropicRequest } from '../anthropic/to-anthropic';
import {
  GeminiStreamDecoder,
  fromGeminiResponse,
  missingFromGeminiAnswer,
} from '../gemini/from-gemini';
import { toGeminiRequest } from '../gemini/to-gemini';
import { type AccessTokens, GoogleAccessTokens } from './vertex-auth';
import { modelSegment, toVertexMessagesBody, vertexAnthropicBody } from './vertex-body';

/**
 * `kind: vertex`: Google Vertex AI. A model's `upstream_api` picks its publisher:
 * `messages` is Claude (Anthropic Messages bodies through `rawPredict`), `gemini` is
 * Gemini (`generateContent`, through the Gemini translators). `project` and `location`
 * are required; `base_url` defaults to the location's endpoint.
 */
export const VERTEX: ProviderDescriptor = {
  kind: 'vertex',
  apis: ['messages', 'gemini'],
  defaultApi: 'messages',
  needsKey: false,
  needsBaseUrl: true,
  defaultBaseUrl: (settings) => {
    const location = own(settings, 'location') ?? 'global';
    return location === 'global'
      ? 'https://aiplatform.googleapis.com'
      : `https://${location}-aiplatform.googleapis.com`;
  },
  settings: [
    { key: 'project', required: true },
    { key: 'location', required: true },
  ],
  framing: 'sse',
  // Claude's Messages bodies pass through (fields rewritten for Vertex); Gemini translates.
  nativeFormats: (model) => (model.upstreamApi === 'messages' ? ['messages'] : []),
};

/**
 * Vertex AI's publisher models: `POST {base}/v1/projects/{project}/locations/{location}/
 * publishers/{anthropic|google}/models/{id}:{method}`, authorized with a Google access
 * token; a 401 drops the cached token and the call is sent once more with a new one.
 */
export class VertexProvider implements UpstreamProvider {
  readonly descriptor = VERTEX;
  private readonly root: string;

  constructor(
    readonly config: CatalogProvider,
    private readonly http: UpstreamHttpClient,
    private readonly redactor: Redactor,
    private readonly tokens: AccessTokens,
  ) {
    const settings = config.settings ?? {};
    const project = encodeURIComponent(own(settings, 'project') ?? '');
    const location = encodeURIComponent(own(settings, 'location') ?? '');
    this.root = `${config.baseUrl}/v1/projects/${project}/locations/${location}/publishers`;
  }

  /** Claude's fast path: the client's Messages body, with `model` out and the Vertex version in. */
  async passthrough(call: PassthroughCall): Promise<PassthroughResult> {
    if (call.format !== 'messages' || call.model.upstreamApi !== 'messages') {
      throw new Error(`provider ${this.config.name} cannot pass through ${call.format}`);
    }
    const { ctx } = call;
    const res = await this.post(
      this.url(call.model, call.stream),
      toVertexMessagesBody(call.body),
      ctx,
    );
    return this.http.relay(res, ctx, this.config.name, call.stream, call.answer);
  }

  generate(
    request: CanonicalRequest,
    model: CatalogModel,
    ctx: CallContext,
  ): Observable<CanonicalEvent> {
    const url = this.url(model, request.stream);
    const common = {
      http: this.http,
      framing: 'sse' as const,
      stream: request.stream,
      ctx,
      providerName: this.config.name,
    };
    if (model.upstreamApi === 'gemini') {
      const { body, dropped } = toGeminiRequest(request, model);
      ctx.droppedParams?.push(...dropped);
      return canonicalCall({
        ...common,
        payload: JSON.stringify(body),
        send: (payload) => this.post(url, payload, ctx),
        answer: missingFromGeminiAnswer,
        fromJson: fromGeminiResponse,
        decoder: () => new GeminiStreamDecoder(),
      });
    }
    const { body, dropped } = toAnthropicRequest(request, model);
    ctx.droppedParams?.push(...dropped);
    return canonicalCall({
      ...common,
      payload: JSON.stringify(vertexAnthropicBody(body)),
      send: (payload) => this.post(url, payload, ctx),
      answer: 'messages',
      fromJson: (message) => fromAnthropicMessage(message),
      decoder: () => new AnthropicStreamDecoder(),
    });
  }

  private url(model: CatalogModel, stream: boolean): string {
    const id = modelSegment(model.upstreamId);
    if (model.upstreamApi === 'gemini') {
      return `${this.root}/google/models/${id}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
    }
    return `${this.root}/anthropic/models/${id}:${stream ? 'streamRawPredict' : 'rawPredict'}`;
  }

  /** One call with a valid token; a 401 is answered once more with a fresh token. */
  private async post(
    url: string,
    body: string | Buffer,
    ctx: CallContext,
  ): Promise<UpstreamResponse> {
    let res = await this.send(url, body, ctx);
    if (res.statusCode === 401) {
      // Read off (it is a small error body), so the connection stays usable.
      await res.body.dump();
      this.tokens.invalidate();
      res = await this.send(url, body, ctx);
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return res;
    }
    const error = await upstreamHttpError(res, this.config.name, (t) => this.redactor.redactCut(t));
    throw this.redactor.redactError(error);
  }

  private async send(
    url: string,
    body: string | Buffer,
    ctx: CallContext,
  ): Promise<UpstreamResponse> {
    const headers: Record<string, string> = {
      ...this.config.headers,
      'content-type': 'application/json',
      authorization: `Bearer ${await this.tokens.token()}`,
    };
    const beta = headerValue(ctx.clientHeaders['anthropic-beta']);
    if (beta !== undefined && url.includes('/publishers/anthropic/')) {
      headers['anthropic-beta'] = beta;
    }
    return this.http.send({ url, method: 'POST', headers, body, signal: ctx.signal });
  }
}

/** Driver for `kind: vertex` providers. */
@Injectable()
@ProviderDriverFor(VERTEX)
export class VertexDriver implements ProviderDriver {
  constructor(
    private readonly http: UpstreamHttpClient,
    private readonly redactor: Redactor,
  ) {}

  create(config: CatalogProvider): UpstreamProvider {
    return new VertexProvider(
      config,
      this.http,
      this.redactor,
      new GoogleAccessTokens(config.name),
    );
  }
}
