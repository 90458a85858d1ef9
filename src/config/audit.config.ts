import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { readNamespace } from './validate-env';

/** The audit log: how long its entries are kept. */
export class AuditEnv {
  /** Entries older than this many days are deleted by the hourly sweeper. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) @Max(36_500) AUDIT_RETENTION_DAYS = 365;
}

export interface AuditConfig {
  retentionDays: number;
}

export const auditConfig = registerAs('audit', (): AuditConfig => ({
  retentionDays: readNamespace(AuditEnv).AUDIT_RETENTION_DAYS,
}));
