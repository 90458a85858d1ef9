import { Module } from '@nestjs/common';
import { GenerationModule } from '../shared/generation.module';
import { ChatCompletionsController } from './chat-completions.controller';

/** The OpenAI Chat Completions wire format. */
@Module({
  imports: [GenerationModule],
  controllers: [ChatCompletionsController],
})
export class ChatCompletionsModule {}
