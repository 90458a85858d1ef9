import { Module } from '@nestjs/common';
import { GenerationModule } from '../shared/generation.module';
import { MessagesController } from './messages.controller';
import { CountTokensService } from './count-tokens.service';

/** The Anthropic Messages wire format. */
@Module({
  imports: [GenerationModule],
  controllers: [MessagesController],
  providers: [CountTokensService],
})
export class MessagesModule {}
