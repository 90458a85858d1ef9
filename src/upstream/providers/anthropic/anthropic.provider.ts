import { Injectable } from '@nestjs/common';
import type { CatalogProvider } from '../../../catalog/catalog.types';
import type {
  PassthroughCall,
  PassthroughResult,
  ProviderDriver,
  UpstreamProvider,
} from '../../provider.interface';
import { ProviderDriverFor } from '../../provider-registry';
import { sseFrames } from '../../sse-source';
import { UpstreamHttpClient, mapTransportError } from '../../upstream-http.client';

const DEFAULT_VERSION = '2023-06-01';

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
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
    const headers: Record<string, string> = {
      ...this.headers,
      'anthropic-version':
        header(call.ctx.clientHeaders['anthropic-version']) ??
        this.config.anthropicVersion ??
        DEFAULT_VERSION,
    };
    const beta = header(call.ctx.clientHeaders['anthropic-beta']);
    if (beta !== undefined) {
      headers['anthropic-beta'] = beta;
    }
    const own = new AbortController();
    const signal = AbortSignal.any([call.ctx.signal, own.signal]);
    const res = await this.http.sendOk(
      {
        url: `${this.config.baseUrl}/v1/messages`,
        method: 'POST',
        headers,
        body: call.body,
        signal,
      },
      this.config.name,
    );
    if (!call.stream) {
      let body: Buffer;
      try {
        body = Buffer.from(await res.body.arrayBuffer());
      } catch (e) {
        throw mapTransportError(e, signal);
      }
      return { kind: 'json', status: res.statusCode, body, contentType: 'application/json' };
    }
    return { kind: 'stream', frames: sseFrames(res, call.ctx.flow, () => own.abort(), signal) };
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
