/**
 * Rule S1: every request must carry a system prompt. One check per wire format (each in
 * its format's folder, `<format>.system-prompt.ts`, built from the readers below); each
 * returns `undefined` when the prompt is present (or the body is too malformed to tell,
 * which validation reports), or the violation to report.
 */
export interface SystemPromptViolation {
  param: string;
  message: string;
}

export type SystemPromptCheck = (body: unknown) => SystemPromptViolation | undefined;

/** Whether a string or a block array holds non-blank text. */
export function hasText(content: unknown): boolean {
  if (typeof content === 'string') {
    return content.trim() !== '';
  }
  return (
    Array.isArray(content) &&
    content.some(
      (part: unknown) =>
        typeof part === 'object' &&
        part !== null &&
        typeof (part as { text?: unknown }).text === 'string' &&
        (part as { text: string }).text.trim() !== '',
    )
  );
}

/** A JSON object: not null, not an array. */
export function isBody(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

/** The fields the checks read: fixed names, never a key taken from the body. */
export type Field =
  'messages' | 'input' | 'role' | 'type' | 'content' | 'system' | 'previous_message_id';

/** A fixed field of a body, or undefined when the body is not an object. */
export function field(body: unknown, name: Field): unknown {
  return isBody(body) ? body[name] : undefined;
}
