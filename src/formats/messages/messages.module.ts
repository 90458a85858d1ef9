import { Module } from '@nestjs/common';

/** The Anthropic Messages wire format (issue #4 fills this in). */
@Module({})
export class MessagesModule {}
