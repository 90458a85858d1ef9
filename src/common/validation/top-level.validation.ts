import { validateSync } from 'class-validator';
import { InvalidRequestError } from '../errors/gateway-errors';

/** A plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Rejects the request with a 400 naming the offending field. */
export function invalidField(param: string, message: string): never {
  throw new InvalidRequestError(message, param, 'invalid_value');
}

/**
 * Validates the top-level fields of a JSON body against a class-validator DTO without
 * copying the body: the decorators run on a shallow view, the first problem becomes a 400
 * naming its field. Returns the client's own object, typed; unknown fields stay in it.
 */
export function validateTopLevel<T extends object>(Dto: new () => T, body: unknown): T {
  if (!isObject(body)) {
    throw new InvalidRequestError('The request body must be a JSON object.', null, 'invalid_json');
  }
  // Keys are copied one by one because JSON may carry an own "__proto__" key, which
  // Object.assign would turn into a prototype swap.
  const view = new Dto() as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (key !== '__proto__') {
      view[key] = body[key];
    }
  }
  const errors = validateSync(view, { forbidUnknownValues: false, stopAtFirstError: true });
  if (errors.length > 0) {
    const first = errors[0];
    const missing = body[first.property] === undefined;
    const reason = Object.values(first.constraints ?? {})[0] ?? 'is invalid';
    invalidField(
      first.property,
      missing
        ? `Missing required parameter: '${first.property}'.`
        : `Invalid value for '${first.property}': ${reason}.`,
    );
  }
  return body as T;
}
