import { Module } from '@nestjs/common';
import { GenerationModule } from '../shared/generation.module';
import { ResponsesController } from './responses.controller';
import { ResponsesOwnership } from './responses.ownership';
import { StoredResponsesService } from './stored-responses.service';

/** The OpenAI Responses wire format. */
@Module({
  imports: [GenerationModule],
  controllers: [ResponsesController],
  providers: [StoredResponsesService, ResponsesOwnership],
})
export class ResponsesModule {}
