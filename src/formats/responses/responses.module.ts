import { Module } from '@nestjs/common';

/** The OpenAI Responses wire format (issue #3 fills this in). */
@Module({})
export class ResponsesModule {}
