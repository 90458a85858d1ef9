import { Module } from '@nestjs/common';
import { CatalogModule } from '../../catalog/catalog.module';
import { PolicyModule } from '../../policy/policy.module';
import { UpstreamModule } from '../../upstream/upstream.module';
import { ResponsesController } from './responses.controller';
import { ResponsesService } from './responses.service';
import { StoredResponsesService } from './stored-responses.service';

/** The OpenAI Responses wire format. */
@Module({
  imports: [CatalogModule, PolicyModule, UpstreamModule],
  controllers: [ResponsesController],
  providers: [ResponsesService, StoredResponsesService],
})
export class ResponsesModule {}
