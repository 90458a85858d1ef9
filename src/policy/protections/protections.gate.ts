import { Injectable } from '@nestjs/common';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import type { Protection } from './protection';
import {
  type LabeledPart,
  type ProtectionExtractor,
  type ProtectionTool,
  withoutProtectionTools,
} from './protection-facts';
import { ProtectionRegistry } from './protection-registry';
import { ProtectionReport } from './protection-report';
import { writeProtectionUsage } from './protection-usage';

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
  /**
   * The client's body without the protection tools (a copy), when it had any: what the
   * limits count and the upstream gets. The client's body itself is never changed.
   */
  stripped: Record<string, unknown> | undefined;
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
 * The protections of a generation request, in two steps that the generation guard puts
 * around the rate limits: {@link plan} reads every protection's settings (a bad one is a
 * 400 that costs nothing) and makes the body without the protection tools, so that the
 * limits count only the client's own tools; {@link check} then runs the checks before the
 * upstream call (the local stages, then any paid model call). The plan travels in the
 * request's plan to the serving path, which runs the outgoing steps.
 */
@Injectable()
export class ProtectionsGate {
  constructor(private readonly registry: ProtectionRegistry) {}

  /** The request's plan, or undefined when no protection is on (most requests). */
  plan(
    extractor: ProtectionExtractor,
    req: GatewayRequest,
    res: GatewayResponse,
  ): ProtectionPlan | undefined {
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
      return undefined;
    }
    const plan: ProtectionPlan = {
      report: new ProtectionReport(),
      active,
      outgoing: active.filter((a) => a.protection.output !== undefined),
      stripped: withoutProtectionTools(body, found),
    };
    // An error answered after this point (the limits, a check, the service) has no verdict to wait for.
    const beforeErrorResponse = (): void => {
      plan.report.settlePending('error');
      publish(plan, req, res);
    };
    req.ctx.beforeErrorResponse = beforeErrorResponse;
    return plan;
  }

  /**
   * The most the plan's protections may spend on their own model calls for a request whose
   * prompt text has `promptChars` characters, in pico-dollars (see Protection.worstCaseCost).
   */
  worstCase(plan: ProtectionPlan, promptChars: number): bigint {
    let total = 0n;
    for (const { protection, settings } of plan.active) {
      total += protection.worstCaseCost?.(settings, promptChars) ?? 0n;
    }
    return total;
  }

  /**
   * Runs the plan's checks (synchronous when it has none), then lists the outgoing
   * protections as pending and publishes the report. `body`: what goes upstream, when
   * admission rebuilt it (a conversation the client continued); the client's by default.
   */
  check(
    plan: ProtectionPlan,
    extractor: ProtectionExtractor,
    req: GatewayRequest,
    res: GatewayResponse,
    body: unknown = req.body,
  ): true | Promise<true> {
    const checks = plan.active.filter((a) => a.protection.check !== undefined);
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
): Promise<true> {
  const ctx = { req, res, report: plan.report };
  let parts: LabeledPart[] | undefined;
  const partsOnce = (): LabeledPart[] => (parts ??= readParts());
  try {
    for (const { protection, settings } of checks) {
      await protection.check?.(settings, partsOnce, ctx);
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
