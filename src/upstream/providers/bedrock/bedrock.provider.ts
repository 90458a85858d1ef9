import { headerValue } from '../../../common/http/header-value';
import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import { type ProviderDescriptor, ProviderDriverFor } from '../../../catalog/provider-kind';
import { own } from '../../../common/own';
import type { CanonicalEvent, CanonicalRequest } from '../../../core/canonical';
import { canonicalCall } from '../../canonical-call';
import type { CallContext, ProviderDriver, UpstreamProvider } from '../../provider.interface';
import { readCapped } from '../../upstream-body';
import { UpstreamHttpClient, type UpstreamResponse } from '../../upstream-http.client';
import { bedrockError } from './bedrock-errors';
import { BedrockSigner } from './bedrock-signer';
import {
  ConverseStreamDecoder,
  fromConverseResponse,
  missingFromConverseAnswer,
} from './from-bedrock';
import { toConverseRequest } from './to-bedrock';

/** How much of an error answer is read to explain it. */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * `kind: bedrock`: Amazon Bedrock Runtime's Converse API (Claude, Llama, Mistral, Nova and
 * the others behind one API), reached from every inbound format through the translators.
 * `region` is required and signed; `base_url` defaults to the region's endpoint (set it for
 * a VPC endpoint). Credentials come from the AWS chain, so no `api_key_env`.
 */
export const BEDROCK: ProviderDescriptor = {
  kind: 'bedrock',
  apis: ['converse'],
  defaultApi: 'converse',
  needsKey: false,
  needsBaseUrl: true,
  defaultBaseUrl: (settings) =>
    `https://bedrock-runtime.${own(settings, 'region') ?? 'us-east-1'}.amazonaws.com`,
  settings: [{ key: 'region', required: true }],
  framing: 'aws-eventstream',
  nativeFormats: () => [],
};

function header(res: UpstreamResponse, name: string): string {
  return headerValue(own(res.headers, name)) ?? '';
}

/**
 * The Converse API: `POST {base}/model/{id}/converse`, or `/converse-stream` for a stream
 * (binary event-stream messages, read by the shared event-stream reader). Every call is
 * SigV4-signed over its exact bytes; error answers are read by their exception type
 * (`x-amzn-ErrorType`), in-stream exceptions by theirs.
 */
export class BedrockProvider implements UpstreamProvider {
  readonly descriptor = BEDROCK;

  constructor(
    readonly config: CatalogProvider,
    private readonly http: UpstreamHttpClient,
    private readonly signer: BedrockSigner,
  ) {}

  generate(
    request: CanonicalRequest,
    model: CatalogModel,
    ctx: CallContext,
  ): Observable<CanonicalEvent> {
    const { body, dropped } = toConverseRequest(request, model);
    ctx.droppedParams?.push(...dropped);
    // Not `request.stream` inside `send`: the closure would keep the whole request.
    const { stream } = request;
    const action = stream ? 'converse-stream' : 'converse';
    const url = new URL(
      `${this.config.baseUrl}/model/${encodeURIComponent(model.upstreamId)}/${action}`,
    );
    const name = this.config.name;
    return canonicalCall({
      http: this.http,
      framing: 'aws-eventstream',
      payload: JSON.stringify(body),
      send: (payload) => this.post(url, payload, stream, ctx),
      stream,
      ctx,
      providerName: name,
      answer: missingFromConverseAnswer,
      fromJson: (answer) => fromConverseResponse(answer, name),
      decoder: () => new ConverseStreamDecoder(name),
    });
  }

  private async post(
    url: URL,
    payload: string,
    stream: boolean,
    ctx: CallContext,
  ): Promise<UpstreamResponse> {
    const headers = await this.signer.sign(
      url,
      {
        ...this.config.headers,
        'content-type': 'application/json',
        accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json',
      },
      payload,
    );
    const res = await this.http.send({
      url: url.href,
      method: 'POST',
      headers,
      body: payload,
      signal: ctx.signal,
    });
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return res;
    }
    throw this.http.redactError(await this.failure(res, ctx));
  }

  /** An error answer as its exception: the type from `x-amzn-ErrorType` or `__type`. */
  private async failure(res: UpstreamResponse, ctx: CallContext): Promise<Error> {
    let said: { message?: unknown; Message?: unknown; __type?: unknown } = {};
    try {
      const text = (await readCapped(res, MAX_ERROR_BODY, ctx.signal, this.config.name)).toString();
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null) {
        said = parsed;
      }
    } catch {
      // Too large, cut or not JSON: the status and the header still say what failed.
    }
    const message = typeof said.message === 'string' ? said.message : said.Message;
    const type =
      header(res, 'x-amzn-errortype') || (typeof said.__type === 'string' ? said.__type : '');
    const retry: Record<string, string> = {};
    const after = header(res, 'retry-after');
    if (after !== '') {
      retry['retry-after'] = after;
    }
    return bedrockError(
      type,
      typeof message === 'string' ? message : '',
      this.config.name,
      res.statusCode,
      retry,
    );
  }
}

/** Driver for `kind: bedrock` providers. */
@Injectable()
@ProviderDriverFor(BEDROCK)
export class BedrockDriver implements ProviderDriver {
  constructor(private readonly http: UpstreamHttpClient) {}

  create(config: CatalogProvider): UpstreamProvider {
    const region = own(config.settings ?? {}, 'region') ?? '';
    return new BedrockProvider(config, this.http, new BedrockSigner(region, config.name));
  }
}
