import { type SystemPromptCheck, field, hasText } from '../../policy/system-prompt.rule';

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
