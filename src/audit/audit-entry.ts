import { own, setOwn } from '../common/own';

/** Who did something: a console session, the admin bearer token, nobody yet, or the gateway. */
export type AuditActorKind = 'session' | 'admin_token' | 'anonymous' | 'system';

/** Whether the action happened, failed (a bad sign-in), or was refused (throttled). */
export type AuditOutcome = 'success' | 'failure' | 'denied';

/**
 * Actions recorded today. The type stays open (`domain.verb`) so that another module adds
 * its own (`team.budget_update`) without editing this list.
 */
export type AuditAction =
  | 'key.create'
  | 'key.update'
  | 'key.rotate'
  | 'key.revoke'
  | 'console.sign_in'
  | 'console.sign_in_failed'
  | 'console.sign_out'
  | 'console.session_end'
  | 'console.role_change'
  | 'console.link_requested'
  | (string & {});

/** One thing that happened, as `AuditLog.record` takes it. Never put a secret in `change`. */
export interface AuditEntry {
  action: AuditAction;
  actor: { kind: AuditActorKind; id?: string | null; name?: string | null };
  /** The caller's address (Express `req.ip`, which honours TRUST_PROXY). */
  client?: string | null;
  target?: { kind: string; id: string } | null;
  /** The team the entry concerns: members of that team see it. */
  team?: string | null;
  /** What changed: `{ field: { from, to } }` for updates (see `diff`), or facts of the event. */
  change?: Record<string, unknown> | null;
  outcome?: AuditOutcome;
  /** When it happened; defaults to when `record` was called. */
  at?: Date;
}

const ACTION = /^[a-z][a-z_]*\.[a-z][a-z_]*$/;

/** True for an action name of the `domain.verb` form. */
export function isAuditAction(v: string): boolean {
  return ACTION.test(v) && v.length <= 64;
}

/** Field names whose values are secrets wherever they appear. */
const SECRET_FIELD = /(secret|token|password|passwd|csrf|api[_-]?key|authorization|cookie|^key$)/i;
/** Values that look like credentials whatever field holds them (gateway keys, bearer tokens, JWTs). */
const SECRET_VALUE =
  /(gw-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9_-]{16,}|\bBearer\s+\S+|eyJ[\w-]+\.[\w-]+\.[\w-]+)/;
const MAX_DEPTH = 6;

/**
 * A copy of `value` fit for the audit log: secret-named fields and secret-looking strings
 * become "[redacted]", long strings are cut. The log outlives every credential it mentions.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    if (SECRET_VALUE.test(value)) {
      return '[redacted]';
    }
    return value.length > 1000 ? `${value.slice(0, 1000)}…` : value;
  }
  if (typeof value === 'bigint') {
    return value.toString();
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  if (value instanceof Date) {
    return value.toISOString();
  }
  if (depth >= MAX_DEPTH) {
    return '[nested]';
  }
  if (Array.isArray(value)) {
    return value.slice(0, 200).map((v) => redact(v, depth + 1));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    setOwn(out, k, SECRET_FIELD.test(k) ? '[redacted]' : redact(v, depth + 1));
  }
  return out;
}

/**
 * The fields that differ between two snapshots, as `{ field: { from, to } }`; fields
 * present in neither are skipped. Values are compared by their JSON form.
 */
export function diff(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  const fields = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const field of fields) {
    const from = (before && own(before, field)) ?? null;
    const to = (after && own(after, field)) ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) {
      setOwn(out, field, { from, to });
    }
  }
  return out;
}
