import { type SystemPromptCheck, field, hasText, isBody } from '../../policy/system-prompt.rule';

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
