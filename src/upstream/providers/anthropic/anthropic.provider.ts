import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import type { CanonicalEvent, CanonicalRequest } from '../../../core/canonical';
import { GatewayError, UpstreamHttpError } from '../../../common/errors/gateway-errors';
import type {
  CallContext,
  PassthroughCall,
  PassthroughResult,
  ProviderDriver,
  UpstreamProvider,
} from '../../provider.interface';
import { canonicalCall } from '../../canonical-call';
import { ProviderDriverFor } from '../../provider-registry';
import { AnthropicStreamDecoder, fromAnthropicMessage } from './from-anthropic';
import { toAnthropicRequest } from './to-anthropic';
import { sseFrames } from '../../sse-source';
import { requireEventStream } from '../../upstream-body';
import {
  UpstreamHttpClient,
  mapTransportError,
  upstreamHttpError,
  type UpstreamResponse,
} from '../../upstream-http.client';

const DEFAULT_VERSION = '2023-06-01';
/** Anthropic's "overloaded" status: kept as is, since its SDKs give it its own class. */
const OVERLOADED = 529;

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** A non-streamed upstream answer. */
export interface AnthropicJsonResult {
  status: number;
  body: Buffer;
}

/**
 * The Anthropic Messages API. The gateway authenticates with its own key (`x-api-key`);
 * the client's `anthropic-version` and `anthropic-beta` are forwarded so it gets the
 * semantics it asked for, with the provider's configured version as the fallback.
 */
export class AnthropicProvider implements UpstreamProvider {
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
    if (!call.stream) {
      const body = await readBody(res, ctx.signal);
      return { kind: 'json', status: res.statusCode, body, contentType: 'application/json' };
    }
    await requireEventStream(res, this.config.name);
    return { kind: 'stream', frames: sseFrames(res, ctx.flow, ctx.abort, ctx.signal) };
  }

  /** The translation path: a canonical request as a Messages call, answered in canonical events. */
  generate(
    request: CanonicalRequest,
    model: CatalogModel,
    ctx: CallContext,
  ): Observable<CanonicalEvent> {
    const { body, dropped } = toAnthropicRequest(request, model);
    ctx.droppedParams?.push(...dropped);
    const payload = JSON.stringify(body);
    return canonicalCall({
      send: () => this.post('/v1/messages', payload, ctx),
      stream: request.stream,
      ctx,
      providerName: this.config.name,
      fromJson: (message) => fromAnthropicMessage(message),
      decoder: () => new AnthropicStreamDecoder(),
    });
  }

  /**
   * Any other JSON endpoint of the API (e.g. `/v1/messages/count_tokens`), with the same
   * headers as the Messages call; resolves with the 2xx body, rejects like passthrough.
   */
  async postJson(
    path: string,
    body: string | Buffer,
    ctx: CallContext,
  ): Promise<AnthropicJsonResult> {
    const res = await this.post(path, body, ctx);
    return { status: res.statusCode, body: await readBody(res, ctx.signal) };
  }

  private async post(
    path: string,
    body: string | Buffer,
    ctx: CallContext,
  ): Promise<UpstreamResponse> {
    const headers: Record<string, string> = {
      ...this.headers,
      'anthropic-version':
        header(ctx.clientHeaders['anthropic-version']) ??
        this.config.anthropicVersion ??
        DEFAULT_VERSION,
    };
    const beta = header(ctx.clientHeaders['anthropic-beta']);
    if (beta !== undefined) {
      headers['anthropic-beta'] = beta;
    }
    const res = await this.http.send({
      url: `${this.config.baseUrl}${path}`,
      method: 'POST',
      headers,
      body,
      signal: ctx.signal,
    });
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return res;
    }
    throw await this.failure(res);
  }

  /** Upstream errors as everywhere else, except that 529 stays a 529 `overloaded` error. */
  private async failure(res: UpstreamResponse): Promise<GatewayError> {
    const error = await upstreamHttpError(res, this.config.name);
    if (res.statusCode !== OVERLOADED) {
      return error;
    }
    return new UpstreamHttpError(OVERLOADED, 'overloaded', error.message, {
      code: 'upstream_overloaded',
      headers: error.headers,
    });
  }
}

async function readBody(res: UpstreamResponse, signal: AbortSignal): Promise<Buffer> {
  try {
    return Buffer.from(await res.body.arrayBuffer());
  } catch (e) {
    throw mapTransportError(e, signal);
  }
}

/** Driver for `kind: anthropic` providers. */
@Injectable()
@ProviderDriverFor('anthropic')
export class AnthropicDriver implements ProviderDriver {
  constructor(private readonly http: UpstreamHttpClient) {}

  create(config: CatalogProvider): UpstreamProvider {
    return new AnthropicProvider(config, this.http);
  }
}
