import { sendJson } from '../../common/http/send-json';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { concat, defer, mergeMap } from 'rxjs';
import { CatalogService } from '../../catalog/catalog.service';
import { GatewayError, InvalidRequestError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { writeSse } from '../../common/sse/sse-writer';
import type { AllConfig } from '../../config';
import { createCallContext } from '../../upstream/call-context';
import type { UpstreamProvider } from '../../upstream/provider.interface';

/** A provider that stores resources (Responses API responses) it can be asked for. */
type StoringProvider = UpstreamProvider & Pick<Required<UpstreamProvider>, 'resource'>;

function stores(provider: UpstreamProvider): provider is StoringProvider {
  return provider.resource !== undefined;
}
import { ProviderRegistry } from '../../upstream/provider-registry';
import { ResponsesRelay } from './responses.passthrough';
import { servesNatively } from '../shared/canonical-path';
import { responseShell } from './responses.wire';

/** Response ids as providers mint them; anything else cannot name a stored response. */
const RESPONSE_ID = /^[A-Za-z0-9_-]{1,256}$/;

export class ResponseNotFoundError extends GatewayError {
  constructor(id: string) {
    super(404, 'not_found', `Response with id '${id}' not found.`, { param: 'response_id' });
  }
}

/**
 * `GET` and `DELETE /v1/responses/{id}`: forwarded to the provider that stored the
 * response. A response id does not say which provider that is, so the gateway picks:
 * - the provider of the catalog model named by the `model` query parameter
 *   (`?model=gpt-5`; not forwarded), which must be served through a provider's own
 *   Responses API;
 * - otherwise the one provider that serves the Responses API natively for an available
 *   catalog model, when there is exactly one; with several, the request is rejected
 *   (400) and must name a model.
 * Responses of the local models are never stored (404). The provider's object comes
 * back as it is: its `model` is the provider's model id, not the catalog id.
 */
@Injectable()
export class StoredResponsesService {
  private readonly keepaliveMs: number;
  private storing: StoringProvider[] | undefined;

  constructor(
    private readonly catalog: CatalogService,
    private readonly providers: ProviderRegistry,
    config: ConfigService<AllConfig, true>,
  ) {
    this.keepaliveMs = config.get('app', { infer: true }).sseKeepaliveMs;
  }

  async forward(
    method: 'GET' | 'DELETE',
    id: string,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<void> {
    if (!RESPONSE_ID.test(id)) {
      throw new ResponseNotFoundError(id);
    }
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    const modelId = query.get('model');
    query.delete('model');
    const provider = this.providerFor(modelId, id);
    req.ctx.provider = provider.config.name;
    req.ctx.model = modelId ?? undefined;
    const ctx = createCallContext(req, res);
    const search = query.toString();
    const result = await provider.resource({
      method,
      path: `/responses/${id}${search === '' ? '' : `?${search}`}`,
      ctx,
    });
    if (result.kind === 'json') {
      sendJson(res, result.body);
      return;
    }
    // `?stream=true` replays a stored (background) response as its event stream.
    req.ctx.stream = true;
    const relay = new ResponsesRelay(
      undefined,
      () => responseShell({}, '', id, Math.floor(Date.now() / 1000)),
      (usage) => (req.ctx.usage = usage),
    );
    writeSse(
      res,
      concat(
        result.frames.pipe(mergeMap((frame) => relay.relay(frame))),
        defer(() => relay.end()),
      ),
      { keepaliveMs: this.keepaliveMs, flow: ctx.flow, errorFrames: (error) => relay.fail(error) },
    );
  }

  private providerFor(modelId: string | null, id: string): StoringProvider {
    if (modelId !== null) {
      const model = this.catalog.resolve(modelId, 'responses');
      const provider = this.providers.get(model.provider);
      if (!servesNatively('responses', model, provider) || !stores(provider)) {
        throw new ResponseNotFoundError(id);
      }
      return provider;
    }
    const storing = this.storingProviders();
    if (storing.length === 1) {
      return storing[0];
    }
    if (storing.length === 0) {
      throw new ResponseNotFoundError(id);
    }
    throw new InvalidRequestError(
      `Several providers may hold response '${id}' (${storing.map((p) => p.config.name).join(', ')}): add ?model=<the catalog model that created it>.`,
      'model',
      'ambiguous_provider',
    );
  }

  /** Providers serving the Responses API natively for some available catalog model. */
  private storingProviders(): StoringProvider[] {
    if (!this.storing) {
      const found = new Map<string, StoringProvider>();
      for (const model of this.catalog.listAvailable()) {
        const provider = this.providers.get(model.provider);
        if (
          model.endpoints.has('responses') &&
          stores(provider) &&
          servesNatively('responses', model, provider)
        ) {
          found.set(provider.config.name, provider);
        }
      }
      this.storing = [...found.values()];
    }
    return this.storing;
  }
}
