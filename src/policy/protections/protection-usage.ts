import type { GatewayRequest, GatewayResponse, RequestContext } from '../../common/request-context';
import type { JudgeResult } from './judge/judge-client';
import { PROTECTIONS_USAGE_HEADER } from './protection-report';

/**
 * Tokens and cost a protection's own model call spent (the shadow agent, the injection
 * detector's second stage). Reported apart from the client's usage: header and access log.
 */
export type ProtectionUsage = NonNullable<RequestContext['protectionUsage']>[number];

/** Adds one judge call's usage to the request's log context. */
export function recordProtectionUsage(
  req: GatewayRequest,
  protection: string,
  result: JudgeResult,
): void {
  (req.ctx.protectionUsage ??= []).push({
    protection,
    model: result.model,
    inputTokens: result.usage.inputTokens,
    outputTokens: result.usage.outputTokens,
    costUsd: result.costUsd,
  });
}

/** `shadow_agent_validation;model=m;input_tokens=120;output_tokens=9;cost_usd=0.000213, ...` */
export function protectionUsageHeader(usage: readonly ProtectionUsage[]): string {
  return usage
    .map(
      (u) =>
        `${u.protection};model=${u.model};input_tokens=${u.inputTokens};output_tokens=${u.outputTokens};cost_usd=${Number(u.costUsd.toFixed(8))}`,
    )
    .join(', ');
}

/** Sets the usage header unless there is none or the response already started. */
export function writeProtectionUsage(req: GatewayRequest, res: GatewayResponse): void {
  const usage = req.ctx.protectionUsage;
  if (usage !== undefined && usage.length > 0 && !res.headersSent) {
    res.setHeader(PROTECTIONS_USAGE_HEADER, protectionUsageHeader(usage));
  }
}
