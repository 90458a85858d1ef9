import type { CatalogModel } from '../catalog/catalog.types';

/**
 * The fallback model chosen at admission because the prompt does not fit the requested
 * model's context window; the pipeline starts from it. A WeakMap keeps it off the request type.
 */
const chosen = new WeakMap<object, CatalogModel>();

export function rememberContextFallback(req: object, model: CatalogModel): void {
  chosen.set(req, model);
}

export function contextFallbackOf(req: object): CatalogModel | undefined {
  return chosen.get(req);
}
