import type { Type } from '@nestjs/common';
import { chatCompletionsFormat } from './chat-completions/chat.format';
import { ChatCompletionsModule } from './chat-completions/chat-completions.module';
import { messagesFormat } from './messages/messages.format';
import { MessagesModule } from './messages/messages.module';
import { responsesFormat } from './responses/responses.format';
import { ResponsesModule } from './responses/responses.module';
import type { WireFormatDescriptor } from './shared/wire-format';

/** A wire format as the application registers it: its descriptor and its Nest module. */
export interface RegisteredWireFormat {
  format: WireFormatDescriptor;
  module: Type;
}

/**
 * The wire formats the gateway serves, one line each: the app module mounts their modules,
 * the OpenAPI document lists their generation endpoints.
 */
export const WIRE_FORMATS: readonly RegisteredWireFormat[] = [
  { format: chatCompletionsFormat, module: ChatCompletionsModule },
  { format: responsesFormat, module: ResponsesModule },
  { format: messagesFormat, module: MessagesModule },
];
