import { sendJson } from '../../common/http/send-json';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { concat, defer, mergeMap } from 'rxjs';
import { CatalogService } from '../../catalog/catalog.service';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { OwnedObject } from '../../ownership/owner-store';
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
import { ResponseNotFoundError, ResponsesOwnership, STORED_RESPONSE } from './responses.ownership';
import type { ResponseStore } from './store/response-store';
import { RESPONSE_STORE } from './store/response-store.token';
import { inputItemsPage, responseView } from './store/stored-view';

/** Response ids as providers mint them; anything else cannot name a stored response. */
const RESPONSE_ID = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * `GET` and `DELETE /v1/responses/{id}`, and `GET /v1/responses/{id}/input_items`:
 * answered from the gateway's own store for a response it stored (models whose provider
 * keeps no state), else forwarded to the provider that stored it, for the key that made it only
 * (see ResponsesOwnership; any other key gets OpenAI's 404 without an upstream call).
 * The owner record names the provider and the catalog model. An id without a record
 * (made before records were kept) is reachable by an admin key alone, and for it the
 * gateway picks the provider:
 * - the provider of the catalog model named by the `model` query parameter
 *   (`?model=gpt-5`; never forwarded), which must be served through a provider's own
 *   Responses API;
 * - otherwise the one provider that serves the Responses API natively for an available
 *   catalog model, when there is exactly one; with several, the request is rejected
 *   (400) and must name a model.
 * The provider's object comes back as it is: its `model` is the provider's model id, not
 * the catalog id.
 */
@Injectable()
export class StoredResponsesService {
  private readonly keepaliveMs: number;
  private storing: StoringProvider[] | undefined;

  constructor(
    private readonly catalog: CatalogService,
    private readonly providers: ProviderRegistry,
    private readonly ownership: ResponsesOwnership,
    @Inject(RESPONSE_STORE) private readonly store: ResponseStore,
    config: ConfigService<AllConfig, true>,
  ) {
    this.keepaliveMs = config.get('app', { infer: true }).sseKeepaliveMs;
  }

  async forward(
    method: 'GET' | 'DELETE',
    id: string,
    req: GatewayRequest,
    res: GatewayResponse,
    below?: 'input_items',
  ): Promise<void> {
    const key = req.ctx.key;
    if (!RESPONSE_ID.test(id) || key === undefined) {
      throw new ResponseNotFoundError(id);
    }
    const record = await this.ownership.authorize(id, key);
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    if (record?.kind === STORED_RESPONSE) {
      req.ctx.provider = record.provider;
      req.ctx.model = record.model;
      return this.fromStore(method, record, query, res, below);
    }
    const modelId = record?.model ?? query.get('model');
    query.delete('model');
    const provider = record ? this.recordedProvider(record) : this.providerFor(modelId, id);
    req.ctx.provider = provider.config.name;
    req.ctx.model = modelId ?? undefined;
    const ctx = createCallContext(req, res);
    const search = query.toString();
    const result = await provider.resource({
      method,
      path: `/responses/${id}${below === undefined ? '' : `/${below}`}${search === '' ? '' : `?${search}`}`,
      ctx,
    });
    if (result.kind === 'json') {
      if (record && method === 'DELETE') {
        await this.ownership.forget(id);
      } else if (record && below === 'input_items') {
        // Their ids may come back as item references: they are the owner's too.
        await this.ownership.recordItems(record, result.value);
      }
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

  /** A response the gateway stored itself: read, listed or deleted in its store. */
  private async fromStore(
    method: 'GET' | 'DELETE',
    record: OwnedObject,
    query: URLSearchParams,
    res: GatewayResponse,
    below?: 'input_items',
  ): Promise<void> {
    const id = record.id;
    if (method === 'DELETE') {
      await this.store.remove(id);
      await this.ownership.forget(id);
      sendJson(res, JSON.stringify({ id, object: 'response', deleted: true }));
      return;
    }
    if (below === undefined && query.get('stream') === 'true') {
      throw new InvalidRequestError(
        'Only background responses can be streamed again; this response was not created with background: true.',
        'stream',
      );
    }
    const [row] = await this.store.find([id]);
    if (row === undefined) {
      throw new ResponseNotFoundError(id);
    }
    const body =
      below === 'input_items'
        ? inputItemsPage(JSON.parse(row.inputItems) as never[], query)
        : responseView(row.response, query);
    sendJson(res, JSON.stringify(body));
  }

  /** The provider a record names, while its catalog model is still served by it natively. */
  private recordedProvider(record: OwnedObject): StoringProvider {
    const model = this.catalog.find(record.model);
    const deployment = model
      ? [{ provider: model.provider }, ...(model.deployments ?? [])].find(
          (d) => d.provider.name === record.provider,
        )
      : undefined;
    if (model === undefined || deployment === undefined) {
      throw new ResponseNotFoundError(record.id);
    }
    const provider = this.providers.get(deployment.provider);
    if (!servesNatively('responses', model, provider) || !stores(provider)) {
      throw new ResponseNotFoundError(record.id);
    }
    return provider;
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
