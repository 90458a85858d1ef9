import { chatLimitFacts } from './chat.limits';
import { chatProtections } from './chat.protections';
import { chatSystemPrompt } from './chat.system-prompt';
import type { GenerationFacts } from '../shared/generation.guard';
import type { ChatCompletionRequestDto } from './chat-request.dto';
import { validateChatRequest } from './chat-request.validation';

/** What admitting a chat completions request reads from its body. */
export const chatGeneration: GenerationFacts<ChatCompletionRequestDto> = {
  format: 'chat_completions',
  validate: validateChatRequest,
  systemPrompt: chatSystemPrompt,
  limits: chatLimitFacts,
  protections: chatProtections,
};
