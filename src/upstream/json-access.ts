/** Typed reads of untrusted upstream JSON: a wrong type reads as absent, never throws. */
export type Json = Record<string, unknown>;

export function obj(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Json)
    : {};
}

export function arr(value: unknown): Json[] {
  return Array.isArray(value) ? value.map(obj) : [];
}

export function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}
