import { own, setOwn } from '../../../common/own';

type Schema = Record<string, unknown>;

/** Beyond this depth a recursive schema gets its smallest value (null, [], {}). */
const MAX_DEPTH = 8;
/**
 * Values built for one answer at most: a small schema whose properties all refer back to
 * the root grows as properties^depth, so the depth bound alone does not bound the size.
 */
const MAX_NODES = 2000;

interface Walk {
  root: Schema;
  text: string;
  nodes: number;
}

const STRING_FORMATS: Readonly<Record<string, string>> = {
  'date-time': '2025-01-01T00:00:00Z',
  date: '2025-01-01',
  time: '00:00:00Z',
  email: 'local@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  hostname: 'localhost',
};

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Resolves a local `$ref` (`#/$defs/x`, `#/definitions/x`, `#`), else undefined. */
function resolve(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith('#')) {
    return undefined;
  }
  let node: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
    node = isSchema(node) ? own(node, key) : undefined;
  }
  return isSchema(node) ? node : undefined;
}

function stringFor(schema: Schema, text: string): string {
  const format = typeof schema.format === 'string' ? own(STRING_FORMATS, schema.format) : undefined;
  let value = format ?? (text || 'local');
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  if (value.length < min) {
    value = value.padEnd(min, '.');
  }
  return value.length > max ? value.slice(0, max) : value;
}

function numberFor(schema: Schema, integer: boolean): number {
  const min =
    typeof schema.minimum === 'number'
      ? schema.minimum
      : typeof schema.exclusiveMinimum === 'number'
        ? schema.exclusiveMinimum + (integer ? 1 : 0.5)
        : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  let n = min ?? (max !== undefined && max < 0 ? max : 0);
  if (integer) {
    n = Math.ceil(n);
  }
  return n;
}

function instance(schema: Schema, walk: Walk, depth: number): unknown {
  // Past the budget every container is the smallest of its kind: the answer stays valid
  // where the schema allows it, and bounded where it does not.
  const spent = ++walk.nodes > MAX_NODES || depth > MAX_DEPTH;
  if (typeof schema.$ref === 'string') {
    const target = resolve(schema.$ref, walk.root);
    return target === undefined || spent ? null : instance(target, walk, depth + 1);
  }
  if ('const' in schema) {
    return schema.const;
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[0];
  }
  if ('default' in schema) {
    return schema.default;
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = own(schema, key);
    if (Array.isArray(options)) {
      // A branch that is not just `null`, when there is one: the answer is more useful.
      const branch: unknown = options.find((o) => isSchema(o) && o.type !== 'null') ?? options[0];
      return isSchema(branch) && !spent ? instance(branch, walk, depth + 1) : null;
    }
  }
  const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
  const type = types.find((t) => t !== 'null') ?? types[0];
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      if (spent || !isSchema(schema.properties)) {
        return out;
      }
      // Every declared property, so that strict schemas (all required) are met.
      for (const [name, sub] of Object.entries(schema.properties)) {
        if (isSchema(sub)) {
          setOwn(out, name, instance(sub, walk, depth + 1));
        }
      }
      return out;
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 1;
      if (spent || !isSchema(schema.items)) {
        return [];
      }
      const item = schema.items;
      return Array.from({ length: Math.min(Math.max(min, 1), 16) }, () =>
        instance(item, walk, depth + 1),
      );
    }
    case 'string':
      return stringFor(schema, walk.text);
    case 'integer':
      return numberFor(schema, true);
    case 'number':
      return numberFor(schema, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return isSchema(schema.properties) && !spent
        ? instance({ ...schema, type: 'object' }, walk, depth + 1)
        : walk.text;
  }
}

/**
 * A value that validates against a JSON schema (the subset structured outputs use:
 * objects, arrays, scalars with bounds and formats, enums, const, anyOf/oneOf/allOf and
 * local `$ref`s), with the user's text in its strings: the local models' answer to a
 * structured-output request, so that every client's parse helper can be tried offline.
 */
export function schemaInstance(schema: Record<string, unknown>, text: string): unknown {
  return instance(schema, { root: schema, text, nodes: 0 }, 0);
}
