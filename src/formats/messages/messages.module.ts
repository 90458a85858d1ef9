import { Module } from '@nestjs/common';
import { CatalogModule } from '../../catalog/catalog.module';
import { PolicyModule } from '../../policy/policy.module';
import { UpstreamModule } from '../../upstream/upstream.module';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';

/** The Anthropic Messages wire format. */
@Module({
  imports: [CatalogModule, PolicyModule, UpstreamModule],
  controllers: [MessagesController],
  providers: [MessagesService],
})
export class MessagesModule {}
