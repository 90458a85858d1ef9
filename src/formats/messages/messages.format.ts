import type { WireFormatDescriptor } from '../shared/wire-format';
import { AnthropicExceptionFilter } from './anthropic-exception.filter';
import type { MessagesRequestDto } from './messages-request.dto';
import { messagesAdapter } from './messages.adapter';
import { MESSAGES_PARAMS } from './messages.params';

/** Anthropic Messages (`count_tokens` lives under the same path). */
export const messagesFormat: WireFormatDescriptor<MessagesRequestDto> = {
  name: 'messages',
  path: 'v1/messages',
  envelope: 'anthropic',
  filter: AnthropicExceptionFilter,
  answer: 'messages',
  params: MESSAGES_PARAMS,
  openapi: {
    summary: 'Create a message (Anthropic Messages)',
    tag: 'Anthropic',
    request: 'MessagesRequest',
    answer: 'Message',
    event: 'MessagesStreamEvent',
  },
  adapter: messagesAdapter,
};
