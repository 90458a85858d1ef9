/**
 * Rule S1: every request must carry a system prompt. One check per wire format; each
 * returns `undefined` when the prompt is present (or the body is too malformed to tell,
 * which validation reports), or the violation to report.
 */
export interface SystemPromptViolation {
  param: string;
  message: string;
}

export type SystemPromptCheck = (body: unknown) => SystemPromptViolation | undefined;

function hasText(content: unknown): boolean {
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

function isBody(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

/** The fields the checks read: fixed names, never a key taken from the body. */
type Field = 'messages' | 'input' | 'role' | 'type' | 'content' | 'system' | 'previous_message_id';

function field(body: unknown, name: Field): unknown {
  return isBody(body) ? body[name] : undefined;
}

/** Chat completions: a `system` or `developer` message with text. */
export const chatSystemPrompt: SystemPromptCheck = (body) => {
  const messages = field(body, 'messages');
  if (!Array.isArray(messages)) {
    return undefined;
  }
  const present = messages.some((m: unknown) => {
    const role = field(m, 'role');
    return (role === 'system' || role === 'developer') && hasText(field(m, 'content'));
  });
  return present
    ? undefined
    : {
        param: 'messages',
        message:
          'A system prompt is required: add a message with role "system" or "developer" and non-empty content.',
      };
};

/**
 * Responses: non-empty `instructions`, or a `system`/`developer` message item in `input`
 * with text. The Responses API reads both as the system prompt, and clients differ in which
 * they use (the Vercel AI SDK and LangChain send a `developer` or `system` item).
 */
export const responsesSystemPrompt: SystemPromptCheck = (body) => {
  if (!isBody(body) || hasText(body.instructions)) {
    return undefined;
  }
  const input = body.input;
  const inInput =
    Array.isArray(input) &&
    input.some((item: unknown) => {
      const role = field(item, 'role');
      const type = field(item, 'type') ?? 'message';
      return (
        type === 'message' &&
        (role === 'system' || role === 'developer') &&
        hasText(field(item, 'content'))
      );
    });
  return inInput
    ? undefined
    : {
        param: 'instructions',
        message:
          'A system prompt is required: set non-empty "instructions" or add an input message with role "system" or "developer".',
      };
};

/**
 * Anthropic messages: non-empty top-level `system` (string or text blocks), or the
 * continuation of a message thread. Anthropic keeps a thread's `system` from the request
 * that created it (which met this rule on its way through) and the SDKs leave it out of
 * every later turn (`client.beta.messages.toolRunner()` threads by default). Only
 * Anthropic-served models hold threads; the canonical path rejects `thread`, so a
 * continuation never reaches a model that would answer it without its system prompt.
 */
export const messagesSystemPrompt: SystemPromptCheck = (body) =>
  !isBody(body) || hasText(body.system) || continuesThread(body.thread)
    ? undefined
    : {
        param: 'system',
        message: 'A system prompt is required: set a non-empty top-level "system".',
      };

function continuesThread(thread: unknown): boolean {
  return (
    field(thread, 'type') === 'continue' && typeof field(thread, 'previous_message_id') === 'string'
  );
}
