import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import { type ProviderDescriptor, ProviderDriverFor } from '../../../catalog/provider-kind';
import type { CanonicalEvent, CanonicalRequest } from '../../../core/canonical';
import { canonicalCall } from '../../canonical-call';
import type { CallContext, ProviderDriver, UpstreamProvider } from '../../provider.interface';
import { UpstreamHttpClient } from '../../upstream-http.client';
import { GeminiStreamDecoder, fromGeminiResponse, missingFromGeminiAnswer } from './from-gemini';
import { toGeminiRequest } from './to-gemini';

/**
 * `kind: gemini`: Google's Gemini API (`generateContent`), reached from every inbound
 * format through the translators; no inbound format is native to it.
 */
export const GEMINI: ProviderDescriptor = {
  kind: 'gemini',
  apis: ['gemini'],
  defaultApi: 'gemini',
  needsKey: true,
  needsBaseUrl: true,
  defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  framing: 'sse',
  nativeFormats: () => [],
  reasoningSpendsOutputBudget: true,
};

/**
 * The Gemini API: `POST {base}/models/{model}:generateContent`, or
 * `:streamGenerateContent?alt=sse` for a stream (SSE `data:` chunks, no end marker: the
 * body ends). The key goes in `x-goog-api-key`.
 */
export class GeminiProvider implements UpstreamProvider {
  readonly descriptor = GEMINI;
  private readonly headers: Record<string, string>;

  constructor(
    readonly config: CatalogProvider,
    private readonly http: UpstreamHttpClient,
  ) {
    this.headers = { 'content-type': 'application/json', ...config.headers };
    if (config.apiKey !== undefined) {
      this.headers['x-goog-api-key'] = config.apiKey;
    }
  }

  generate(
    request: CanonicalRequest,
    model: CatalogModel,
    ctx: CallContext,
  ): Observable<CanonicalEvent> {
    const { body, dropped } = toGeminiRequest(request, model);
    ctx.droppedParams?.push(...dropped);
    const method = request.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const url = `${this.config.baseUrl}/models/${encodeURIComponent(model.upstreamId)}:${method}`;
    return canonicalCall({
      http: this.http,
      framing: 'sse',
      payload: JSON.stringify(body),
      send: (payload) =>
        this.http.sendOk(
          { url, method: 'POST', headers: this.headers, body: payload, signal: ctx.signal },
          this.config.name,
        ),
      stream: request.stream,
      ctx,
      providerName: this.config.name,
      answer: missingFromGeminiAnswer,
      fromJson: fromGeminiResponse,
      decoder: () => new GeminiStreamDecoder(),
    });
  }
}

/** Driver for `kind: gemini` providers. */
@Injectable()
@ProviderDriverFor(GEMINI)
export class GeminiDriver implements ProviderDriver {
  constructor(private readonly http: UpstreamHttpClient) {}

  create(config: CatalogProvider): UpstreamProvider {
    return new GeminiProvider(config, this.http);
  }
}
