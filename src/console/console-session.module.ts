import { Module } from '@nestjs/common';
import { ConsoleSessions } from './console-session';

/** Console sessions, shared by the console's pages and the admin API's guard. */
@Module({ providers: [ConsoleSessions], exports: [ConsoleSessions] })
export class ConsoleSessionModule {}
