import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import type { CanonicalEvent, CanonicalRequest, WireFormat } from '../../../core/canonical';
import type {
  CallContext,
  PassthroughCall,
  PassthroughResult,
  ProviderDriver,
  ResourceCall,
  UpstreamProvider,
} from '../../provider.interface';
import { type StreamDecoder, canonicalCall } from '../../canonical-call';
import { ProviderDriverFor } from '../../provider-registry';
import type { TranslatedRequest } from '../../translate-params';
import { ChatStreamDecoder, fromChatCompletion } from './from-openai-chat';
import { ResponsesStreamDecoder, fromResponseObject } from './from-openai-responses';
import { toOpenAiChatRequest } from './to-openai-chat';
import { toOpenAiResponsesRequest } from './to-openai-responses';
import type { AnswerKind } from '../../upstream-body';
import { UpstreamHttpClient, type UpstreamRequest } from '../../upstream-http.client';

const PATHS: Partial<Record<WireFormat, string>> = {
  chat_completions: '/chat/completions',
  responses: '/responses',
};

/** The OpenAI API, or any server that speaks it (vLLM, llama.cpp, LM Studio, ...). */
export class OpenAiProvider implements UpstreamProvider {
  private readonly headers: Record<string, string>;

  constructor(
    readonly config: CatalogProvider,
    private readonly http: UpstreamHttpClient,
  ) {
    this.headers = { 'content-type': 'application/json', ...config.headers };
    if (config.apiKey !== undefined) {
      this.headers.authorization = `Bearer ${config.apiKey}`;
    }
  }

  async passthrough(call: PassthroughCall): Promise<PassthroughResult> {
    const path = PATHS[call.format];
    if (path === undefined) {
      throw new Error(`provider ${this.config.name} cannot pass through ${call.format}`);
    }
    return this.exchange('POST', path, call.body, call.stream, call.ctx, call.format);
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
    const payload = JSON.stringify(body);
    const path = responses ? '/responses' : '/chat/completions';
    return canonicalCall({
      http: this.http,
      send: () =>
        this.http.sendOk(
          {
            url: this.config.baseUrl + path,
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
    return this.exchange(call.method, call.path, undefined, undefined, call.ctx, 'object');
  }

  /**
   * One upstream call; `stream` undefined means: decide from the answer's content type.
   * A non-streamed answer must be a `kind` answer.
   */
  private async exchange(
    method: UpstreamRequest['method'],
    path: string,
    body: string | Buffer | undefined,
    stream: boolean | undefined,
    ctx: CallContext,
    kind: AnswerKind,
  ): Promise<PassthroughResult> {
    const { signal } = ctx;
    const res = await this.http.sendOk(
      {
        url: this.config.baseUrl + path,
        method,
        headers: { ...this.headers, 'x-client-request-id': ctx.requestId },
        body,
        signal,
      },
      this.config.name,
    );
    const contentType = String(res.headers['content-type'] ?? '');
    if (!(stream ?? contentType.includes('text/event-stream'))) {
      const answer = await this.http.readAnswer(res, signal, this.config.name, kind);
      return { kind: 'json', status: res.statusCode, contentType: 'application/json', ...answer };
    }
    await this.http.requireEventStream(res, this.config.name);
    return { kind: 'stream', frames: this.http.eventStream(res, ctx, this.config.name, true) };
  }
}

/** Driver for `kind: openai` providers. */
@Injectable()
@ProviderDriverFor('openai')
export class OpenAiDriver implements ProviderDriver {
  constructor(protected readonly http: UpstreamHttpClient) {}

  create(config: CatalogProvider): UpstreamProvider {
    return new OpenAiProvider(config, this.http);
  }
}

/** OpenAI-compatible servers reuse the OpenAI provider as they are. */
@Injectable()
@ProviderDriverFor('openai-compatible')
export class OpenAiCompatibleDriver extends OpenAiDriver {}
