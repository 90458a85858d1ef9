import { Inject, Injectable } from '@nestjs/common';
import type { WireFormat } from '../core/canonical';
import {
  ModelNotFoundError,
  ModelNotSupportedError,
  ProviderUnavailableError,
} from '../common/errors/gateway-errors';
import type { Catalog, CatalogModel, CatalogProvider } from './catalog.types';

export const CATALOG = Symbol('CATALOG');

const ENDPOINT_PATHS: Record<WireFormat, string> = {
  chat_completions: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
};

/** Read access to the validated model catalog, and the eligibility rule for endpoints. */
@Injectable()
export class CatalogService {
  constructor(@Inject(CATALOG) private readonly catalog: Catalog) {}

  /** Models whose provider can be called, in catalog order. */
  listAvailable(): CatalogModel[] {
    const out: CatalogModel[] = [];
    for (const model of this.catalog.models.values()) {
      if (model.provider.available) {
        out.push(model);
      }
    }
    return out;
  }

  /** Every model, available or not, in catalog order. */
  listAll(): CatalogModel[] {
    return [...this.catalog.models.values()];
  }

  providers(): Iterable<CatalogProvider> {
    return this.catalog.providers.values();
  }

  find(id: string): CatalogModel | undefined {
    return this.catalog.models.get(id);
  }

  /**
   * The model a request on `endpoint` may use: 404 when unknown, 400 when the endpoint
   * does not accept it, 503 when its provider is not configured.
   */
  resolve(id: string, endpoint: WireFormat): CatalogModel {
    const model = this.catalog.models.get(id);
    if (!model) {
      throw new ModelNotFoundError(id);
    }
    if (!model.endpoints.has(endpoint)) {
      const others = (Object.keys(ENDPOINT_PATHS) as WireFormat[])
        .filter((e) => e !== endpoint && model.endpoints.has(e))
        .map((e) => ENDPOINT_PATHS[e]);
      throw new ModelNotSupportedError(
        id,
        ENDPOINT_PATHS[endpoint],
        `Use ${others.join(' or ')} instead.`,
      );
    }
    if (!model.provider.available) {
      throw new ProviderUnavailableError(
        `The model '${id}' is in the catalog, but its provider '${model.provider.name}' has no API key configured (${model.provider.apiKeyEnv ?? 'api_key_env'}).`,
      );
    }
    return model;
  }

  get size(): number {
    return this.catalog.models.size;
  }
}
