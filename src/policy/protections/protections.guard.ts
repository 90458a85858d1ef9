import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import type { Protection } from './protection';
import {
  type LabeledPart,
  type ProtectionExtractor,
  type ProtectionTool,
  stripProtectionTools,
} from './protection-facts';
import { ProtectionRegistry } from './protection-registry';
import { ProtectionReport } from './protection-report';
import { writeProtectionUsage } from './protection-usage';

const PROTECTIONS = 'gateway:protections';

/** One protection turned on for a request, with its settings. */
export interface ActiveProtection {
  protection: Protection;
  settings: unknown;
}

/** What a request's protection tools (or the operator's forced ones) turned on. */
export interface ProtectionPlan {
  report: ProtectionReport;
  /** In run order. */
  active: ActiveProtection[];
  /** Those with an outgoing step (they put the request on the canonical path). */
  outgoing: ActiveProtection[];
}

/** Plans by request; a WeakMap keeps the plan off the shared request type. */
const plans = new WeakMap<object, ProtectionPlan>();

/** The protections of a request, when any is on (set by ProtectionsGuard). */
export function protectionPlanOf(req: GatewayRequest): ProtectionPlan | undefined {
  return plans.get(req);
}

/**
 * Turns on the protections a request names in its tools, reading the body with the
 * format's pure `extractor`. Place it between `@RequestLimits(...)` and
 * `@RequireSystemPrompt(...)`: guards run in the order S1, protections, limits, so the
 * protection tools are stripped before the limits count tools and tokens, and a blocked
 * request costs the client no quota.
 */
export const Protections = (extractor: ProtectionExtractor): MethodDecorator =>
  applyDecorators(SetMetadata(PROTECTIONS, extractor), UseGuards(ProtectionsGuard));

/** The extractor a handler declared, if any (for tests and tooling). */
export function protectionsExtractorOf(handler: object): ProtectionExtractor | undefined {
  return Reflect.getMetadata(PROTECTIONS, handler) as ProtectionExtractor | undefined;
}

function duplicate(
  name: string,
  first: ProtectionTool,
  second: ProtectionTool,
): InvalidRequestError {
  const at = (t: ProtectionTool): string => `${t.field ?? 'tools'}[${t.index}]`;
  return new InvalidRequestError(
    `'${name}' is defined more than once (${at(first)} and ${at(second)}).`,
    at(second),
    'invalid_protection_settings',
  );
}

/**
 * Reads the protection tools: every protection's settings first (a bad one is a 400 that
 * costs nothing), strips the tools from the body, runs the checks before the upstream call,
 * and leaves the outgoing steps to the services through {@link protectionPlanOf}.
 */
@Injectable()
export class ProtectionsGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly registry: ProtectionRegistry,
  ) {}

  /** Synchronous unless a protection has a check to run: most requests carry no protection. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const extractor = this.reflector.get<ProtectionExtractor | undefined>(
      PROTECTIONS,
      context.getHandler(),
    );
    if (!extractor) {
      return true;
    }
    const http = context.switchToHttp();
    const req = http.getRequest<GatewayRequest>();
    const res = http.getResponse<GatewayResponse>();
    const body: unknown = req.body;
    const names = this.registry.toolNames();

    const chosen = extractor.toolChoiceNames(body).find((n) => names.includes(n));
    if (chosen !== undefined) {
      throw new InvalidRequestError(
        `'tool_choice' names '${chosen}', a gateway protection, not a tool the model can call.`,
        'tool_choice',
        'invalid_tool_choice',
      );
    }
    const found = extractor.tools(body, names);
    const byName = new Map<string, ProtectionTool>();
    for (const tool of found) {
      const first = byName.get(tool.name);
      if (first) {
        throw duplicate(tool.name, first, tool);
      }
      byName.set(tool.name, tool);
    }
    const active: ActiveProtection[] = [];
    for (const protection of this.registry.all()) {
      const tool = byName.get(protection.name);
      if (tool !== undefined || this.registry.isForced(protection.name)) {
        active.push({ protection, settings: protection.settings(tool) });
      }
    }
    if (active.length === 0) {
      return true;
    }
    if (stripProtectionTools(body, found)) {
      // The fast paths forward the client's bytes when nothing changed: they changed.
      req.rawBody = undefined;
    }
    const plan: ProtectionPlan = {
      report: new ProtectionReport(),
      active,
      outgoing: active.filter((a) => a.protection.output !== undefined),
    };
    plans.set(req, plan);
    // An error answered after this point (a later guard, the service) has no verdict to wait for.
    req.ctx.beforeErrorResponse = () => {
      plan.report.settlePending('error');
      publish(plan, req, res);
    };
    const checks = active.filter((a) => a.protection.check !== undefined);
    if (checks.length === 0) {
      settle(plan, req, res);
      return true;
    }
    return runChecks(checks, plan, () => extractor.parts(body), req, res);
  }
}

/** Runs the checks in order (one may throw to block), then settles the report. */
async function runChecks(
  checks: ActiveProtection[],
  plan: ProtectionPlan,
  readParts: () => LabeledPart[],
  req: GatewayRequest,
  res: GatewayResponse,
): Promise<boolean> {
  const ctx = { req, res, report: plan.report };
  let parts: LabeledPart[] | undefined;
  const partsOnce = (): LabeledPart[] => (parts ??= readParts());
  try {
    for (const { protection, settings } of checks) {
      await protection.check!(settings, partsOnce, ctx);
    }
  } catch (error) {
    publish(plan, req, res);
    throw error;
  }
  settle(plan, req, res);
  return true;
}

/** Lists the outgoing protections as pending (the services settle them) and publishes. */
function settle(plan: ProtectionPlan, req: GatewayRequest, res: GatewayResponse): void {
  // Listed in the order they run, after the checks.
  for (const { protection } of plan.outgoing) {
    plan.report.set(protection.name, 'pending');
  }
  publish(plan, req, res);
}

/** Set now, before anything is written: JSON, SSE and error responses all carry it. */
function publish(plan: ProtectionPlan, req: GatewayRequest, res: GatewayResponse): void {
  req.ctx.protections = plan.report.toString(false);
  plan.report.writeTo(res);
  writeProtectionUsage(req, res);
}
