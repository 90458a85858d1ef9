import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import { type ProviderDescriptor, ProviderDriverFor } from '../../../catalog/provider-kind';
import type { CanonicalEvent, CanonicalRequest } from '../../../core/canonical';
import type {
  CallContext,
  PassthroughCall,
  PassthroughResult,
  ProviderDriver,
  ResourceCall,
  UpstreamProvider,
} from '../../provider.interface';
import { type StreamDecoder, canonicalCall } from '../../canonical-call';
import type { TranslatedRequest } from '../../translate-params';
import { ChatStreamDecoder, fromChatCompletion } from './from-openai-chat';
import { ResponsesStreamDecoder, fromResponseObject } from './from-openai-responses';
import { toOpenAiChatRequest } from './to-openai-chat';
import { toOpenAiResponsesRequest } from './to-openai-responses';
import type { AnswerKind } from '../../upstream-body';
import { UpstreamHttpClient, type UpstreamRequest } from '../../upstream-http.client';

/** The upstream APIs of the OpenAI family of providers. */
export type OpenAiApi = 'chat_completions' | 'responses';

const PATHS: Record<OpenAiApi, string> = {
  chat_completions: '/chat/completions',
  responses: '/responses',
};

function isOpenAiApi(api: string): api is OpenAiApi {
  return api === 'chat_completions' || api === 'responses';
}

const SPEAKS_OPENAI = {
  apis: ['chat_completions', 'responses'],
  defaultApi: 'chat_completions',
  needsBaseUrl: true,
  framing: 'sse',
} as const;

/**
 * `kind: openai`: OpenAI's own API, which serves every model through the Responses API too,
 * and whose reasoning models show their reasoning only there (which Messages clients want).
 */
export const OPENAI: ProviderDescriptor = {
  ...SPEAKS_OPENAI,
  kind: 'openai',
  needsKey: true,
  reasoningSpendsOutputBudget: true,
  nativeFormats: (model) =>
    model.upstreamApi === 'chat_completions' ? ['chat_completions', 'responses'] : ['responses'],
  translatedApi: (format, model) =>
    format === 'messages' &&
    model.upstreamApi === 'chat_completions' &&
    model.capabilities.reasoning
      ? 'responses'
      : model.upstreamApi,
};

/** `kind: openai-compatible`: any server that speaks the API (vLLM, llama.cpp, LM Studio...). */
export const OPENAI_COMPATIBLE: ProviderDescriptor = {
  ...SPEAKS_OPENAI,
  kind: 'openai-compatible',
  needsKey: false,
};

/**
 * The OpenAI API, or any server that speaks it. Variants (Azure OpenAI) change only where
 * a call goes and how it authenticates: {@link url}, {@link resourceUrl}, {@link auth}.
 */
export class OpenAiProvider implements UpstreamProvider {
  private readonly headers: Record<string, string>;

  constructor(
    readonly config: CatalogProvider,
    private readonly http: UpstreamHttpClient,
    readonly descriptor: ProviderDescriptor = OPENAI,
  ) {
    this.headers = { 'content-type': 'application/json', ...config.headers };
    if (config.apiKey !== undefined) {
      Object.assign(this.headers, this.auth(config.apiKey));
    }
  }

  /** The URL of a call of `api` for `model`. */
  protected url(api: OpenAiApi, _model: CatalogModel): string {
    return this.config.baseUrl + PATHS[api];
  }

  /** The URL of a stored resource (`path` below the base URL, query string included). */
  protected resourceUrl(path: string): string {
    return this.config.baseUrl + path;
  }

  /** The headers that carry the key. */
  protected auth(apiKey: string): Record<string, string> {
    return { authorization: `Bearer ${apiKey}` };
  }

  async passthrough(call: PassthroughCall): Promise<PassthroughResult> {
    if (!isOpenAiApi(call.format)) {
      throw new Error(`provider ${this.config.name} cannot pass through ${call.format}`);
    }
    const url = this.url(call.format, call.model);
    return this.exchange('POST', url, call.body, call.stream, call.ctx, call.answer);
  }

  /**
   * The translation path, through the API `model.upstreamApi` names (`responses` or
   * `chat_completions`); non-streamed answers become the same canonical events.
   */
  generate(
    request: CanonicalRequest,
    model: CatalogModel,
    ctx: CallContext,
  ): Observable<CanonicalEvent> {
    const responses = model.upstreamApi === 'responses';
    const { body, dropped }: TranslatedRequest = responses
      ? toOpenAiResponsesRequest(request, model)
      : toOpenAiChatRequest(request, model);
    ctx.droppedParams?.push(...dropped);
    const url = this.url(responses ? 'responses' : 'chat_completions', model);
    return canonicalCall({
      http: this.http,
      framing: this.descriptor.framing ?? 'sse',
      payload: JSON.stringify(body),
      send: (payload) =>
        this.http.sendOk(
          {
            url,
            method: 'POST',
            headers: { ...this.headers, 'x-client-request-id': ctx.requestId },
            body: payload,
            signal: ctx.signal,
          },
          this.config.name,
        ),
      stream: request.stream,
      ctx,
      providerName: this.config.name,
      answer: responses ? 'responses' : 'chat_completions',
      fromJson: responses ? fromResponseObject : fromChatCompletion,
      decoder: (): StreamDecoder =>
        responses ? new ResponsesStreamDecoder() : new ChatStreamDecoder(),
    });
  }

  resource(call: ResourceCall): Promise<PassthroughResult> {
    const url = this.resourceUrl(call.path);
    return this.exchange(call.method, url, undefined, undefined, call.ctx, 'object');
  }

  /**
   * One upstream call; `stream` undefined means: decide from the answer's content type.
   * A non-streamed answer must be a `kind` answer.
   */
  private async exchange(
    method: UpstreamRequest['method'],
    url: string,
    body: string | Buffer | undefined,
    stream: boolean | undefined,
    ctx: CallContext,
    kind: AnswerKind,
  ): Promise<PassthroughResult> {
    const { signal } = ctx;
    const res = await this.http.sendOk(
      {
        url,
        method,
        headers: { ...this.headers, 'x-client-request-id': ctx.requestId },
        body,
        signal,
      },
      this.config.name,
    );
    const streamed =
      stream ?? String(res.headers['content-type'] ?? '').includes('text/event-stream');
    return this.http.relay(res, ctx, this.config.name, streamed, kind);
  }
}

/** Driver for `kind: openai` providers. */
@Injectable()
@ProviderDriverFor(OPENAI)
export class OpenAiDriver implements ProviderDriver {
  constructor(protected readonly http: UpstreamHttpClient) {}

  create(config: CatalogProvider): UpstreamProvider {
    return new OpenAiProvider(config, this.http, OPENAI);
  }
}

/** OpenAI-compatible servers reuse the OpenAI provider as they are. */
@Injectable()
@ProviderDriverFor(OPENAI_COMPATIBLE)
export class OpenAiCompatibleDriver extends OpenAiDriver {
  override create(config: CatalogProvider): UpstreamProvider {
    return new OpenAiProvider(config, this.http, OPENAI_COMPATIBLE);
  }
}
