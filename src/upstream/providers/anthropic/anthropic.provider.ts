import { headerValue } from '../../../common/http/header-value';
import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import { type ProviderDescriptor, ProviderDriverFor } from '../../../catalog/provider-kind';
import { own } from '../../../common/own';
import type { CanonicalEvent, CanonicalRequest } from '../../../core/canonical';
import type {
  CallContext,
  PassthroughCall,
  PassthroughResult,
  ProviderDriver,
  UpstreamProvider,
} from '../../provider.interface';
import { canonicalCall } from '../../canonical-call';
import { AnthropicStreamDecoder, fromAnthropicMessage } from './from-anthropic';
import { toAnthropicRequest } from './to-anthropic';
import type { AnswerKind } from '../../upstream-body';
import { UpstreamHttpClient, type UpstreamResponse } from '../../upstream-http.client';

const DEFAULT_VERSION = '2023-06-01';

/** `kind: anthropic`: the Messages API, with an optional `anthropic_version` fallback. */
export const ANTHROPIC: ProviderDescriptor = {
  kind: 'anthropic',
  apis: ['messages'],
  defaultApi: 'messages',
  needsKey: true,
  needsBaseUrl: true,
  settings: [{ key: 'anthropic_version' }],
  framing: 'sse',
};

/** A non-streamed upstream answer: its bytes and the same parsed. */
export interface AnthropicJsonResult {
  status: number;
  body: Buffer;
  value: Record<string, unknown>;
}

/**
 * The Anthropic Messages API. The gateway authenticates with its own key (`x-api-key`);
 * the client's `anthropic-version` and `anthropic-beta` are forwarded so it gets the
 * semantics it asked for, with the provider's configured version as the fallback.
 */
export class AnthropicProvider implements UpstreamProvider {
  readonly descriptor = ANTHROPIC;
  private readonly headers: Record<string, string>;

  constructor(
    readonly config: CatalogProvider,
    private readonly http: UpstreamHttpClient,
  ) {
    this.headers = { 'content-type': 'application/json', ...config.headers };
    if (config.apiKey !== undefined) {
      this.headers['x-api-key'] = config.apiKey;
    }
  }

  async passthrough(call: PassthroughCall): Promise<PassthroughResult> {
    if (call.format !== 'messages') {
      throw new Error(`provider ${this.config.name} cannot pass through ${call.format}`);
    }
    const { ctx } = call;
    const res = await this.post('/v1/messages', call.body, ctx);
    return this.http.relay(res, ctx, this.config.name, call.stream, call.answer);
  }

  /** The translation path: a canonical request as a Messages call, answered in canonical events. */
  generate(
    request: CanonicalRequest,
    model: CatalogModel,
    ctx: CallContext,
  ): Observable<CanonicalEvent> {
    const { body, dropped } = toAnthropicRequest(request, model);
    ctx.droppedParams?.push(...dropped);
    return canonicalCall({
      http: this.http,
      framing: 'sse',
      payload: JSON.stringify(body),
      send: (payload) => this.post('/v1/messages', payload, ctx),
      stream: request.stream,
      ctx,
      providerName: this.config.name,
      answer: 'messages',
      fromJson: (message) => fromAnthropicMessage(message),
      decoder: () => new AnthropicStreamDecoder(),
    });
  }

  /** Anthropic counts a Messages body's tokens exactly. */
  async countTokens(body: string | Buffer, ctx: CallContext): Promise<Record<string, unknown>> {
    return (await this.postJson('/v1/messages/count_tokens', body, ctx, 'count_tokens')).value;
  }

  /**
   * Any other JSON endpoint of the API (e.g. `/v1/messages/count_tokens`), with the same
   * headers as the Messages call; resolves with the 2xx answer checked to be a `kind`
   * answer, rejects like passthrough.
   */
  async postJson(
    path: string,
    body: string | Buffer,
    ctx: CallContext,
    kind: AnswerKind = 'object',
  ): Promise<AnthropicJsonResult> {
    const res = await this.post(path, body, ctx);
    const answer = await this.http.readAnswer(res, ctx.signal, this.config.name, kind);
    return { status: res.statusCode, ...answer };
  }

  /** One Messages API call; a non-2xx answer rejects like every provider's (529 kept). */
  private post(path: string, body: string | Buffer, ctx: CallContext): Promise<UpstreamResponse> {
    const headers: Record<string, string> = {
      ...this.headers,
      'anthropic-version':
        headerValue(ctx.clientHeaders['anthropic-version']) ??
        own(this.config.settings ?? {}, 'anthropic_version') ??
        DEFAULT_VERSION,
    };
    const beta = headerValue(ctx.clientHeaders['anthropic-beta']);
    if (beta !== undefined) {
      headers['anthropic-beta'] = beta;
    }
    return this.http.sendOk(
      { url: `${this.config.baseUrl}${path}`, method: 'POST', headers, body, signal: ctx.signal },
      this.config.name,
    );
  }
}

/** Driver for `kind: anthropic` providers. */
@Injectable()
@ProviderDriverFor(ANTHROPIC)
export class AnthropicDriver implements ProviderDriver {
  constructor(private readonly http: UpstreamHttpClient) {}

  create(config: CatalogProvider): UpstreamProvider {
    return new AnthropicProvider(config, this.http);
  }
}
