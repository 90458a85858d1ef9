import { Injectable } from '@nestjs/common';
import { keyMayUseModel } from '../auth/key-policy';
import { CatalogService } from '../catalog/catalog.service';
import type { CatalogModel } from '../catalog/catalog.types';
import type { GatewayRequest } from '../common/request-context';
import type { WireFormat } from '../core/canonical';
import { contextFallbackOf } from './context-fallback';

export const FALLBACKS_HEADER = 'x-gateway-fallbacks';

/** Most fallback models one request may name: each one may cost a full set of attempts. */
const MAX_FALLBACKS = 5;

/**
 * The models a request may be served by, in order: the requested one, then the client's own
 * order (`x-gateway-fallbacks: a,b`, or OpenRouter's `models` array in the body) or else the
 * catalog's `fallbacks`. Only models that exist, serve this endpoint, have a configured
 * provider and that the client's key may use are kept; the others are skipped silently, as
 * OpenRouter does, since a fallback list is a preference, not a demand.
 */
@Injectable()
export class FallbackPlan {
  constructor(private readonly catalog: CatalogService) {}

  /**
   * The candidate models for `model`. `bodyModels`: the body's `models` array (already taken
   * out of the body, which goes upstream).
   */
  candidates(
    model: CatalogModel,
    req: GatewayRequest,
    format: WireFormat,
    bodyModels: unknown,
  ): CatalogModel[] {
    const header = req.headers[FALLBACKS_HEADER];
    const asked =
      typeof header === 'string'
        ? header.split(',').map((s) => s.trim())
        : Array.isArray(bodyModels)
          ? bodyModels.filter((m): m is string => typeof m === 'string')
          : undefined;
    const ids = asked ?? model.fallbacks ?? [];
    // The prompt does not fit the requested model: admission chose a fallback that holds it.
    const larger = contextFallbackOf(req);
    if (larger !== undefined) {
      const rest = model.fallbacks ?? [];
      const next = rest.slice(rest.indexOf(larger.id) + 1);
      const usable = this.usable([larger.id, ...next], req, format);
      // One the key may not use or that does not serve here: the upstream's own refusal.
      return usable[0] === larger ? usable : [model];
    }
    if (ids.length === 0) {
      return [model];
    }
    return [model, ...this.usable(ids, req, format, model)];
  }

  /** The models of `ids` that exist, serve `format` and the key may use, at most MAX_FALLBACKS. */
  private usable(
    ids: readonly string[],
    req: GatewayRequest,
    format: WireFormat,
    except?: CatalogModel,
  ): CatalogModel[] {
    const out: CatalogModel[] = [];
    for (const id of ids) {
      const m = this.catalog.find(id);
      if (
        m !== undefined &&
        m !== except &&
        !out.includes(m) &&
        m.endpoints.has(format) &&
        m.provider.available &&
        keyMayUseModel(req.ctx.key, m.id)
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
