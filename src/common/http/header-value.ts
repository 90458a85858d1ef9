/**
 * A header's value as one string (a repeated header's values joined with commas, as HTTP
 * allows), or undefined when it is absent: node and undici give `string | string[]`.
 */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
