import { Injectable } from '@nestjs/common';
import { keyMayUseModel, type ApiKeyInfo } from '../common/key-policy';
import { CatalogService } from '../catalog/catalog.service';
import type { CatalogModel } from '../catalog/catalog.types';
import type { GatewayRequest } from '../common/request-context';
import type { WireFormat } from '../core/canonical';

export const FALLBACKS_HEADER = 'x-gateway-fallbacks';

/** Most fallback models one request may name: each one may cost a full set of attempts. */
const MAX_FALLBACKS = 5;

/**
 * The fallback model ids the client asked for: `x-gateway-fallbacks: a,b`, else OpenRouter's
 * `models` array in the body; undefined when it asked for none.
 */
export function askedFallbacks(req: GatewayRequest, body: object): string[] | undefined {
  const header = req.headers[FALLBACKS_HEADER];
  if (typeof header === 'string') {
    return header.split(',').map((s) => s.trim());
  }
  const bodyModels = (body as { models?: unknown }).models;
  return Array.isArray(bodyModels)
    ? bodyModels.filter((m): m is string => typeof m === 'string')
    : undefined;
}

/**
 * The models a request may be served by, in order: the requested one, then the client's own
 * order (`x-gateway-fallbacks: a,b`, or OpenRouter's `models` array in the body) or else the
 * catalog's `fallbacks`. Only models that exist, serve this endpoint, have a configured
 * provider and that the client's key may use are kept; the others are skipped silently, as
 * OpenRouter does, since a fallback list is a preference, not a demand. A catalog fallback
 * serves every endpoint its model's does, whatever its own `endpoints` say: the operator
 * chose it for this model, and the translators answer in the client's format (a Claude
 * model behind an OpenAI one on `/v1/responses`).
 */
@Injectable()
export class FallbackPlan {
  constructor(private readonly catalog: CatalogService) {}

  /**
   * The candidate models for `model`, for a request by `key`. `asked`: the client's own
   * list ({@link askedFallbacks}). `larger`: the prompt does not fit `model`, and admission
   * found this fallback that holds it.
   */
  candidates(
    model: CatalogModel,
    key: ApiKeyInfo | undefined,
    format: WireFormat,
    asked: readonly string[] | undefined,
    larger?: CatalogModel,
  ): CatalogModel[] {
    const ids = asked ?? model.fallbacks ?? [];
    if (larger !== undefined) {
      const rest = model.fallbacks ?? [];
      const next = rest.slice(rest.indexOf(larger.id) + 1);
      const usable = this.usable([larger.id, ...next], key, format, true);
      // One the key may not use or that does not serve here: the upstream's own refusal.
      return usable[0] === larger ? usable : [model];
    }
    if (ids.length === 0) {
      return [model];
    }
    return [model, ...this.usable(ids, key, format, asked === undefined, model)];
  }

  /**
   * The fallback that serves a prompt too long for `model`: the first of its catalog
   * fallbacks the key may use and whose window holds the prompt (`fits`, the limits'
   * estimate).
   */
  contextFallback(
    model: CatalogModel,
    key: ApiKeyInfo | undefined,
    format: WireFormat,
    fits: (m: CatalogModel) => boolean,
  ): CatalogModel | undefined {
    for (const id of model.fallbacks ?? []) {
      const m = this.catalog.find(id);
      if (m !== undefined && m.provider.available && keyMayUseModel(key, m.id) && fits(m)) {
        return m;
      }
    }
    return undefined;
  }

  /**
   * The models of `ids` that exist, serve `format` (any, for the catalog's own fallbacks)
   * and the key may use, at most MAX_FALLBACKS.
   */
  private usable(
    ids: readonly string[],
    key: ApiKeyInfo | undefined,
    format: WireFormat,
    fromCatalog: boolean,
    except?: CatalogModel,
  ): CatalogModel[] {
    const out: CatalogModel[] = [];
    for (const id of ids) {
      const m = this.catalog.find(id);
      if (
        m !== undefined &&
        m !== except &&
        !out.includes(m) &&
        (fromCatalog || m.endpoints.has(format)) &&
        m.provider.available &&
        keyMayUseModel(key, m.id)
      ) {
        out.push(m);
      }
      if (out.length >= MAX_FALLBACKS) {
        break;
      }
    }
    return out;
  }
}
