import type { Request } from 'express';
import type { AuditEntry } from '../audit/audit-entry';
import { clientOf } from '../console/console-session';
import type { ManagedKeyRecord } from '../keys/key-record';
import { microsToUsd } from '../common/money';
import type { AdminPrincipal } from '../console/admin-auth';

/** The audit actor and client address of an admin API call. */
export function auditSource(
  who: AdminPrincipal,
  req: Request,
): Pick<AuditEntry, 'actor' | 'client'> {
  return {
    actor:
      who.via === 'token'
        ? { kind: 'admin_token', id: 'token', name: 'admin token' }
        : { kind: 'session', id: who.principal, name: who.name },
    client: clientOf(req),
  };
}

/**
 * The fields of a key an audit diff compares: what the key may do and spend. Never its
 * secrets (only their count changes on rotation), nor bookkeeping such as last use.
 */
export function keyAuditFields(k: ManagedKeyRecord): Record<string, unknown> {
  return {
    name: k.name,
    owner: k.owner,
    expires_at: k.expiresAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    revoked_reason: k.revokedReason,
    models: k.models,
    endpoints: k.endpoints,
    limits: k.limits,
    budget: k.budget && { amount_usd: microsToUsd(k.budget.amountMicros), period: k.budget.period },
    metadata: k.metadata,
  };
}
