import { messagesLimitFacts } from './messages.limits';
import { messagesProtections } from './messages.protections';
import { messagesSystemPrompt } from './messages.system-prompt';
import type { GenerationFacts } from '../shared/generation.guard';
import type { MessagesRequestDto } from './messages-request.dto';
import { validateMessagesRequest } from './messages-request.validation';

/** What admitting a Messages request reads from its body. */
export const messagesGeneration: GenerationFacts<MessagesRequestDto> = {
  format: 'messages',
  validate: validateMessagesRequest,
  systemPrompt: messagesSystemPrompt,
  limits: messagesLimitFacts,
  protections: messagesProtections,
};
