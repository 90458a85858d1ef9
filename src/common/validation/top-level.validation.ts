import { ValidateIf, validateSync, type ValidationError } from 'class-validator';
import { InvalidRequestError } from '../errors/gateway-errors';
import { own, setOwn } from '../own';
import { compiledCheckOf } from './compiled-check';

/** A plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Rejects the request with a 400 naming the offending field. */
export function invalidField(param: string, message: string): never {
  throw new InvalidRequestError(message, param, 'invalid_value');
}

/**
 * Like `@IsOptional()`, but only an absent field skips the checks: an explicit `null` is
 * validated, so a field whose API does not accept null gets a 400 naming it instead of
 * reaching code that reads it as an object.
 */
export function OptionalNotNull(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/** What a failed type constraint expected, for "Invalid type" messages. */
const EXPECTED_TYPE: Readonly<Record<string, [one: string, many: string]>> = {
  isString: ['a string', 'strings'],
  isArray: ['an array', 'arrays'],
  isInt: ['an integer', 'integers'],
  isNumber: ['a number', 'numbers'],
  isBoolean: ['a boolean', 'booleans'],
  isObject: ['an object', 'objects'],
};

/**
 * A client value for an error message: primitives as they are, objects and arrays by
 * their kind. Never String(value): an object with its own `toString` or `valueOf` key
 * makes String() and template literals throw.
 */
export function printable(value: unknown): string {
  return typeof value === 'object' && value !== null ? describeType(value) : String(value);
}

function describeType(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  if (typeof value === 'number' && Number.isInteger(value)) {
    return 'an integer';
  }
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function messageFor(error: ValidationError, value: unknown): string {
  const field = error.property;
  if (value === undefined) {
    return `Missing required parameter: '${field}'.`;
  }
  const constraints = error.constraints ?? {};
  // A wrong type is named as such, before any rule about the value's size or content.
  for (const name of Object.keys(constraints)) {
    const expected = own(EXPECTED_TYPE, name);
    if (expected === undefined) {
      continue;
    }
    // An array failing a scalar type check failed it on an element (`{ each: true }`).
    if (Array.isArray(value) && name !== 'isArray') {
      return `Invalid type for '${field}': expected an array of ${expected[1]}.`;
    }
    return `Invalid type for '${field}': expected ${expected[0]}, but got ${describeType(value)}.`;
  }
  const reason = Object.values(constraints)[0] ?? 'is invalid';
  return `Invalid value for '${field}': ${reason}.`;
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
  // The common case, a valid body, without class-validator's per-call metadata work.
  if (compiledCheckOf(Dto)?.(body) === true) {
    return body as T;
  }
  // Only own keys that the DTO does not inherit are copied: "__proto__" would swap the
  // view's prototype, and "constructor" would hide the class whose metadata
  // class-validator looks up through it (switching validation off). Such keys are
  // unknown fields, which stay in the body untouched.
  const view = new Dto() as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!(key in Dto.prototype)) {
      setOwn(view, key, own(body, key));
    }
  }
  const errors = validateSync(view, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const first = errors[0];
    invalidField(first.property, messageFor(first, own(body, first.property)));
  }
  return body as T;
}
