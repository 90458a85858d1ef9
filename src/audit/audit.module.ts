import { Global, Module } from '@nestjs/common';
import { AuditLog } from './audit-log';

/** The audit log, global so that any module can record with `AuditLog.record`. */
@Global()
@Module({ providers: [AuditLog], exports: [AuditLog] })
export class AuditModule {}
