import { OpenAiExceptionFilter } from '../openai/openai-exception.filter';
import type { WireFormatDescriptor } from '../shared/wire-format';
import type { ChatCompletionRequestDto } from './chat-request.dto';
import { chatAdapter } from './chat.adapter';
import { CHAT_PARAMS } from './chat.params';

/** OpenAI Chat Completions. */
export const chatCompletionsFormat: WireFormatDescriptor<ChatCompletionRequestDto> = {
  name: 'chat_completions',
  path: 'v1/chat/completions',
  envelope: 'openai',
  filter: OpenAiExceptionFilter,
  answer: 'chat_completions',
  params: CHAT_PARAMS,
  openapi: {
    summary: 'Create a chat completion (OpenAI Chat Completions)',
    tag: 'OpenAI',
    request: 'ChatCompletionRequest',
    answer: 'ChatCompletion',
    event: 'ChatCompletionChunk',
  },
  adapter: chatAdapter,
};
