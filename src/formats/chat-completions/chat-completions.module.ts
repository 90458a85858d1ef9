import { Module } from '@nestjs/common';
import { CatalogModule } from '../../catalog/catalog.module';
import { PolicyModule } from '../../policy/policy.module';
import { UpstreamModule } from '../../upstream/upstream.module';
import { ChatCompletionsController } from './chat-completions.controller';
import { ChatCompletionsService } from './chat-completions.service';

/** The OpenAI Chat Completions wire format. */
@Module({
  imports: [CatalogModule, PolicyModule, UpstreamModule],
  controllers: [ChatCompletionsController],
  providers: [ChatCompletionsService],
})
export class ChatCompletionsModule {}
