import { Injectable } from '@nestjs/common';
import type { CatalogProvider } from '../../../catalog/catalog.types';
import type { WireFormat } from '../../../core/canonical';
import type {
  CallContext,
  PassthroughCall,
  PassthroughResult,
  ProviderDriver,
  ResourceCall,
  UpstreamProvider,
} from '../../provider.interface';
import { ProviderDriverFor } from '../../provider-registry';
import { sseFrames } from '../../sse-source';
import {
  UpstreamHttpClient,
  type UpstreamRequest,
  mapTransportError,
} from '../../upstream-http.client';

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
    return this.exchange('POST', path, call.body, call.stream, call.ctx);
  }

  resource(call: ResourceCall): Promise<PassthroughResult> {
    return this.exchange(call.method, call.path, undefined, undefined, call.ctx);
  }

  /** One upstream call; `stream` undefined means: decide from the answer's content type. */
  private async exchange(
    method: UpstreamRequest['method'],
    path: string,
    body: string | Buffer | undefined,
    stream: boolean | undefined,
    ctx: CallContext,
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
      let answer: Buffer;
      try {
        answer = Buffer.from(await res.body.arrayBuffer());
      } catch (e) {
        throw mapTransportError(e, signal);
      }
      return {
        kind: 'json',
        status: res.statusCode,
        body: answer,
        contentType: 'application/json',
      };
    }
    return { kind: 'stream', frames: sseFrames(res, ctx.flow, ctx.abort, signal) };
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
