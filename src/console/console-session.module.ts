import { Module } from '@nestjs/common';
import { AdminAuth } from './admin-auth';
import { ConsoleSessions } from './console-session';

/**
 * Console sessions and who the admin caller is (token or session), shared by the
 * console's pages and the admin API's guard.
 */
@Module({ providers: [ConsoleSessions, AdminAuth], exports: [ConsoleSessions, AdminAuth] })
export class ConsoleSessionModule {}
