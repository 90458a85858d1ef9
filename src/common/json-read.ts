import { own } from './own';
/** Small readers shared by the extractors: they accept anything and never throw. */

export type Json = Record<string, unknown>;

export function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Adds `v` to the prompt texts when it is a non-empty string. */
export function pushText(texts: string[], v: unknown): void {
  if (typeof v === 'string' && v !== '') {
    texts.push(v);
  }
}

/** Adds a JSON value (schema, tool input) as the text the model reads. */
export function pushJson(texts: string[], v: unknown): void {
  if (v !== undefined && v !== null) {
    pushText(texts, typeof v === 'string' ? v : safeStringify(v));
  }
}

/**
 * A tool definition as the model reads it: name, description and the JSON of its schema
 * (closer to the providers' own rendering than the JSON of the whole definition).
 */
export function pushTool(
  texts: string[],
  name: unknown,
  description: unknown,
  schema: unknown,
): void {
  pushText(texts, name);
  pushText(texts, description);
  pushJson(texts, schema);
}

/** The caps that are set (null means "not set" in the OpenAI formats). */
export function outputCaps(
  body: Json,
  params: readonly string[],
): { param: string; value: unknown }[] {
  const caps: { param: string; value: unknown }[] = [];
  for (const param of params) {
    const value = own(body, param);
    if (value !== undefined && value !== null) {
      caps.push({ param, value });
    }
  }
  return caps;
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return '';
  }
}
