import { type SystemPromptCheck, field, hasText, isBody } from '../../policy/system-prompt.rule';

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
