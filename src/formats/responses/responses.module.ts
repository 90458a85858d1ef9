import { Module } from '@nestjs/common';
import { DATABASE } from '../../db/db.module';
import type { OpenDatabase } from '../../db/database';
import { ObjectOwnership } from '../../ownership/object-ownership.service';
import { CONVERSATION_STATE } from '../shared/conversation-state';
import { GenerationModule } from '../shared/generation.module';
import { ResponsesController } from './responses.controller';
import { ResponsesOwnership } from './responses.ownership';
import { StoredResponsesService } from './stored-responses.service';
import { ResponseRecorder } from './store/response-recorder';
import {
  KyselyResponseStore,
  MemoryResponseStore,
  type ResponseStore,
} from './store/response-store';
import { RESPONSE_STORE } from './store/response-store.token';
import { ResponseSweeper } from './store/response-sweeper';
import { ResponsesConversations } from './store/responses-conversations';

/** Responses kept in memory when there is no key store (KEY_STORE=off). */
const MEMORY_CAPACITY = 10_000;

/** The OpenAI Responses wire format, with the gateway's store of the responses it answers. */
@Module({
  imports: [GenerationModule],
  controllers: [ResponsesController],
  providers: [
    StoredResponsesService,
    ResponsesOwnership,
    {
      provide: RESPONSE_STORE,
      inject: [DATABASE, ObjectOwnership],
      useFactory: (database: OpenDatabase | null, owners: ObjectOwnership): ResponseStore =>
        database
          ? new KyselyResponseStore(database.db)
          : new MemoryResponseStore(MEMORY_CAPACITY, (objects) => owners.record(objects)),
    },
    ResponseRecorder,
    ResponseSweeper,
    { provide: CONVERSATION_STATE, useClass: ResponsesConversations },
  ],
})
export class ResponsesModule {}
