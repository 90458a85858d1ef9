/**
 * Tool arguments are JSON text canonically; Anthropic wants the object. Truncated
 * arguments (max tokens hit mid-call) or a non-object cannot be parsed: `{}`.
 */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
