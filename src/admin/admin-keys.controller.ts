import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Query,
  Req,
  UseGuards,
} from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyService } from '../auth/api-key.service';
import { Public } from '../common/public.decorator';
import { CatalogService } from '../catalog/catalog.service';
import { GatewayError, InvalidRequestError } from '../common/errors/gateway-errors';
import { own } from '../common/own';
import type { KeyStatus, ManagedKeyRecord } from '../keys/key-record';
import { KeysService } from '../keys/keys.service';
import type { AdminPrincipal } from '../console/admin-auth';
import { AdminGuard, principalOf } from './admin.guard';
import { type ModelIndex, parseKeyBody } from './key-input';
import { UsagePipeline } from '../usage/usage.module';
import { AuditLog } from '../audit/audit-log';
import { diff } from '../audit/audit-entry';
import { auditSource, keyAuditFields } from './audit-facts';
import { managedKeyView, spendPeriodOf, staticKeyView } from './views';

const STATUSES: KeyStatus[] = ['active', 'revoked', 'expired'];
const MAX_GRACE_SECONDS = 30 * 86_400;

/** A member acting outside their own team. */
class OtherTeamError extends GatewayError {
  constructor(team: string | null) {
    super(403, 'permission', `Members manage only the keys of their own team ('${team}').`, {
      param: 'owner',
      code: 'other_team',
    });
  }
}

class KeyNotFoundError extends GatewayError {
  constructor(id: string) {
    super(404, 'not_found', `No API key with id '${id}'.`, { param: 'id', code: 'key_not_found' });
  }
}

/** Parses `?limit=` (1..100, default 20). */
export function pageLimit(raw: string | undefined): number {
  if (raw === undefined) {
    return 20;
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100) {
    throw new InvalidRequestError(
      "Invalid 'limit': expected an integer from 1 to 100.",
      'limit',
      'invalid_value',
    );
  }
  return n;
}

function optionalObject(body: unknown, allowed: string[]): Record<string, unknown> {
  if (body === undefined || body === null) {
    return {};
  }
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The body must be a JSON object.', null, 'invalid_value');
  }
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) {
      throw new InvalidRequestError(
        `Invalid '${field}': unknown field; expected ${allowed.join(', ')}.`,
        field,
        'invalid_value',
      );
    }
  }
  return body as Record<string, unknown>;
}

/**
 * `/admin/v1/keys`: create, list, read, change, revoke and rotate client keys. Managed
 * keys are writable; keys from GATEWAY_API_KEYS and the keys file are listed read-only.
 */
@Controller('admin/v1/keys')
@Public()
@UseGuards(AdminGuard)
export class AdminKeysController {
  private readonly models: ModelIndex;

  constructor(
    private readonly keys: KeysService,
    private readonly staticKeys: ApiKeyService,
    private readonly usage: UsagePipeline,
    private readonly audit: AuditLog,
    @Inject(CatalogService) catalog: CatalogService,
  ) {
    this.models = {
      exists: (id) => catalog.find(id) !== undefined,
      ids: () => catalog.listAvailable().map((m) => m.id),
    };
  }

  @Post()
  @HttpCode(201)
  async create(@Body() body: unknown, @Req() req: Request): Promise<object> {
    const who = principalOf(req);
    const changes = this.ownTeam(who, parseKeyBody(body, false, this.models, Date.now()));
    const name = changes.name;
    if (name === undefined) {
      // parseKeyBody requires it on creation; kept here so the type says so too.
      throw new InvalidRequestError("Missing required parameter: 'name'.", 'name', 'invalid_value');
    }
    const { key, secret } = await this.keys.create({ ...changes, name });
    this.recordKey(req, who, 'key.create', key, diff(null, keyAuditFields(key)));
    return { ...(await this.view(key)), key: secret };
  }

  @Get()
  async list(
    @Req() req: Request,
    @Query('owner') owner?: string,
    @Query('status') status?: string,
    @Query('limit') limit?: string,
    @Query('after') after?: string,
  ): Promise<object> {
    if (status !== undefined && !STATUSES.includes(status as KeyStatus)) {
      throw new InvalidRequestError(
        `Invalid 'status': expected one of ${STATUSES.join(', ')}.`,
        'status',
        'invalid_value',
      );
    }
    const who = principalOf(req);
    if (who.role === 'member' && owner !== undefined && owner !== who.team) {
      throw new OtherTeamError(who.team);
    }
    const member = who.role === 'member';
    const page = await this.keys.list({
      // A member sees their team's keys only, whatever the query asks.
      owner: member ? (who.team ?? '') : owner,
      status: status as KeyStatus | undefined,
      limit: pageLimit(limit),
      after,
    });
    // Static keys have no owner and are always active: they head the first page.
    const statics =
      !member &&
      after === undefined &&
      owner === undefined &&
      (status === undefined || status === 'active')
        ? this.staticKeys.staticKeys().map(staticKeyView)
        : [];
    return {
      object: 'list',
      data: [...statics, ...(await this.views(page.keys))],
      has_more: page.next !== undefined,
      next_cursor: page.next ?? null,
    };
  }

  @Get(':id')
  async get(@Param('id') id: string, @Req() req: Request): Promise<object> {
    const who = principalOf(req);
    const statics = this.staticKeys.staticKeys().find((k) => k.id === id);
    if (statics && who.role === 'admin') {
      return staticKeyView(statics);
    }
    return this.view(await this.visible(who, id));
  }

  @Patch(':id')
  async update(
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: Request,
  ): Promise<object> {
    this.refuseStatic(id);
    const who = principalOf(req);
    const before = await this.visible(who, id);
    const changes = parseKeyBody(body, true, this.models, Date.now());
    if (who.role === 'member' && changes.owner !== undefined && changes.owner !== who.team) {
      throw new OtherTeamError(who.team);
    }
    const after = this.found(id, await this.keys.update(id, changes));
    // Before and after of the fields that changed: budget, models, limits, owner...
    this.recordKey(
      req,
      who,
      'key.update',
      after,
      diff(keyAuditFields(before), keyAuditFields(after)),
      before.owner,
    );
    return this.view(after);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  async revoke(
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: Request,
  ): Promise<object> {
    this.refuseStatic(id);
    const who = principalOf(req);
    const before = await this.visible(who, id);
    const reason = own(optionalObject(body, ['reason']), 'reason');
    if (
      reason !== undefined &&
      reason !== null &&
      (typeof reason !== 'string' || reason.length > 500)
    ) {
      throw new InvalidRequestError(
        "Invalid 'reason': expected a string of at most 500 characters.",
        'reason',
        'invalid_value',
      );
    }
    const key = this.found(id, await this.keys.revoke(id, reason ?? null));
    this.recordKey(req, who, 'key.revoke', key, diff(keyAuditFields(before), keyAuditFields(key)));
    return this.view(key);
  }

  @Post(':id/rotate')
  @HttpCode(200)
  async rotate(
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: Request,
  ): Promise<object> {
    this.refuseStatic(id);
    const grace = own(optionalObject(body, ['grace_period_seconds']), 'grace_period_seconds') ?? 0;
    if (
      !Number.isInteger(grace) ||
      (grace as number) < 0 ||
      (grace as number) > MAX_GRACE_SECONDS
    ) {
      throw new InvalidRequestError(
        `Invalid 'grace_period_seconds': expected an integer from 0 to ${MAX_GRACE_SECONDS}.`,
        'grace_period_seconds',
        'invalid_value',
      );
    }
    const who = principalOf(req);
    const existing = await this.visible(who, id);
    if (existing.revokedAt !== null) {
      throw new InvalidRequestError('A revoked key cannot be rotated.', 'id', 'key_revoked');
    }
    const rotated = await this.keys.rotate(id, grace as number);
    const { key, secret } = rotated ?? { key: this.found(id, undefined), secret: '' };
    this.recordKey(req, who, 'key.rotate', key, {
      grace_period_seconds: grace,
      // Hints only (prefix and last four), never a secret.
      hint_last4: { from: existing.secrets[0]?.last4 ?? null, to: key.secrets[0]?.last4 ?? null },
    });
    return { ...(await this.view(key)), key: secret };
  }

  /** One audit entry about a key; `formerTeam` also sees a key that moved away from it. */
  private recordKey(
    req: Request,
    who: AdminPrincipal,
    action: string,
    key: ManagedKeyRecord,
    change: Record<string, unknown>,
    formerTeam?: string | null,
  ): void {
    const entry = {
      ...auditSource(who, req),
      action,
      target: { kind: 'api_key', id: key.id },
      team: key.owner,
      change,
    };
    this.audit.record(entry);
    if (formerTeam !== undefined && formerTeam !== null && formerTeam !== key.owner) {
      this.audit.record({ ...entry, team: formerTeam });
    }
  }

  /** Views with each key's spend in its budget period (one query per distinct period). */
  private async views(keys: ManagedKeyRecord[]): Promise<Record<string, unknown>[]> {
    const spent = await this.usage.spend?.periodSpend(
      keys.map((k) => ({ id: k.id, period: spendPeriodOf(k) })),
    );
    const now = Date.now();
    return keys.map((k) => managedKeyView(k, now, spent?.get(k.id) ?? 0n));
  }

  private async view(key: ManagedKeyRecord): Promise<Record<string, unknown>> {
    return (await this.views([key]))[0];
  }

  /** The key, or 404 when it does not exist or belongs to another team than a member's. */
  private async visible(who: AdminPrincipal, id: string): Promise<ManagedKeyRecord> {
    const key = this.found(id, await this.keys.get(id));
    if (who.role === 'member' && key.owner !== who.team) {
      // 404, not 403: a member cannot learn which ids other teams use.
      throw new KeyNotFoundError(id);
    }
    return key;
  }

  /** A member's new key belongs to their team; naming another team is refused. */
  private ownTeam<T extends { owner?: string | null }>(who: AdminPrincipal, changes: T): T {
    if (who.role !== 'member') {
      return changes;
    }
    if (changes.owner !== undefined && changes.owner !== null && changes.owner !== who.team) {
      throw new OtherTeamError(who.team);
    }
    return { ...changes, owner: who.team };
  }

  private found(id: string, key: ManagedKeyRecord | undefined): ManagedKeyRecord {
    if (!key) {
      throw new KeyNotFoundError(id);
    }
    return key;
  }

  private refuseStatic(id: string): void {
    if (this.staticKeys.staticKeys().some((k) => k.id === id)) {
      throw new InvalidRequestError(
        `The key '${id}' comes from GATEWAY_API_KEYS or the keys file and is read-only here.`,
        'id',
        'static_key_read_only',
      );
    }
  }
}
