import { Injectable, Logger } from '@nestjs/common';
import { type MonoTypeOperatorFunction, type Observable, tap } from 'rxjs';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import type { CanonicalEvent, CanonicalRequest } from '../../core/canonical';
import { counterFor, countTexts, familyProfile } from '../../limits/tokens/token-estimator';
import { JudgeClient } from './judge/judge-client';
import { SHADOW_AGENT_TOOL, SYSTEM_PROMPT_FILTER_TOOL } from './protection-facts';
import { PROTECTIONS_HEADER, PROTECTIONS_USAGE_HEADER } from './protection-report';
import {
  protectionUsageHeader,
  recordProtectionUsage,
  writeProtectionUsage,
} from './protection-usage';
import { type ProtectionPlan, protectionPlanOf } from './protections.guard';
import { ProtectionsHealth } from './protections-health';
import { makeShadowJudge } from './shadow-agent/shadow-agent';
import { type ShadowOutcome, shadowValidation } from './shadow-agent/shadow-agent.operator';
import { shadowContextOf } from './shadow-agent/prompt';
import { takeSecrets } from './system-prompt-filter/secrets';
import {
  type LeakReport,
  systemPromptFilter,
} from './system-prompt-filter/system-prompt-filter.operator';

/**
 * The outgoing protections (`system_prompt_filter`, `shadow_agent_validation`): operators
 * over the canonical events of the answer, between the upstream and the format's encoder.
 * A request with either is served on the canonical path, whatever its format and model,
 * so that one implementation covers every format, streamed or not.
 */
@Injectable()
export class OutputProtections {
  private readonly logger = new Logger('Protections');

  constructor(
    private readonly judge: JudgeClient,
    private readonly health: ProtectionsHealth,
  ) {}

  /** Whether the request has outgoing protections (which need the canonical path). */
  active(req: GatewayRequest): boolean {
    const plan = protectionPlanOf(req);
    return plan !== undefined && (plan.filter !== undefined || plan.shadow !== undefined);
  }

  /**
   * Prepares the outgoing protections of a decoded request: takes the `<secret>` markers out
   * of its system prompt (call before the request goes upstream) and returns the operator
   * for its events, or undefined when none is on.
   */
  prepare(
    req: GatewayRequest,
    res: GatewayResponse,
    request: CanonicalRequest,
    model: CatalogModel,
  ): MonoTypeOperatorFunction<CanonicalEvent> | undefined {
    const plan = protectionPlanOf(req);
    if (plan === undefined || (plan.filter === undefined && plan.shadow === undefined)) {
      return undefined;
    }
    const steps: MonoTypeOperatorFunction<CanonicalEvent>[] = [];
    if (plan.filter) {
      steps.push(this.filterStep(plan, request, model, req));
    }
    if (plan.shadow) {
      steps.push(this.shadowStep(plan, request, req));
    }
    if (request.stream) {
      // A stream's headers leave before the verdicts: the final ones follow as trailers.
      res.setHeader('trailer', `${PROTECTIONS_HEADER}, ${PROTECTIONS_USAGE_HEADER}`);
    }
    const publish = (): void => this.publish(plan, req, res);
    return (events: Observable<CanonicalEvent>) =>
      steps
        .reduce((source, step) => source.pipe(step), events)
        .pipe(tap({ complete: publish, error: publish }));
  }

  private filterStep(
    plan: ProtectionPlan,
    request: CanonicalRequest,
    model: CatalogModel,
    req: GatewayRequest,
  ): MonoTypeOperatorFunction<CanonicalEvent> {
    const settings = plan.filter!;
    const secrets = takeSecrets(request.system);
    const profile = familyProfile(model.family);
    const counter = counterFor(profile.encoding);
    let leaks = 0;
    let blocked = false;
    let verdictSet = false;
    const settle = (): void => {
      if (verdictSet) {
        return;
      }
      verdictSet = true;
      const verdict = blocked ? 'blocked' : leaks > 0 ? 'redacted' : 'pass';
      plan.report.set(SYSTEM_PROMPT_FILTER_TOOL, verdict, leaks > 0 ? { leaks } : {});
      this.health.record(SYSTEM_PROMPT_FILTER_TOOL, verdict);
    };
    const filter = systemPromptFilter(secrets, settings, {
      onLeak: (leak: LeakReport) => {
        leaks++;
        blocked ||= leak.action === 'block';
        // Never the text: where it leaked and how long the run was.
        this.logger.warn(
          `${SYSTEM_PROMPT_FILTER_TOOL} ${leak.action === 'block' ? 'blocked' : 'redacted'} request ${req.ctx.requestId}: ${leak.words} words of the system prompt in ${leak.channel}`,
        );
      },
      countTokens: (text) => Math.ceil(countTexts([text], counter) * profile.factor),
    });
    return (events) => events.pipe(filter, tap({ complete: settle }));
  }

  private shadowStep(
    plan: ProtectionPlan,
    request: CanonicalRequest,
    req: GatewayRequest,
  ): MonoTypeOperatorFunction<CanonicalEvent> {
    const settings = plan.shadow!;
    const judge = makeShadowJudge(
      this.judge,
      settings,
      shadowContextOf(request),
      req.ctx.requestId,
    );
    return shadowValidation(settings, judge, (outcome: ShadowOutcome) => {
      if (outcome.judge) {
        recordProtectionUsage(req, SHADOW_AGENT_TOOL, outcome.judge);
      }
      if (outcome.verdict === 'error') {
        this.health.recordError(SHADOW_AGENT_TOOL);
      }
      this.health.record(SHADOW_AGENT_TOOL, outcome.decision);
      const details: Record<string, string> = {};
      if (outcome.verdict === 'error') {
        details.error = outcome.error ?? 'judge failed';
      } else if (outcome.decision !== 'pass' && outcome.reason) {
        details.reason = outcome.reason;
      }
      plan.report.set(SHADOW_AGENT_TOOL, outcome.decision, details);
      if (outcome.decision !== 'pass' || outcome.verdict === 'error') {
        this.logger.warn(
          `${SHADOW_AGENT_TOOL} ${outcome.decision} request ${req.ctx.requestId}: verdict=${outcome.verdict} scope=${settings.scope} model=${settings.model}${outcome.error ? ` error=${outcome.error}` : ''}`,
        );
      }
    });
  }

  /** Final verdicts: headers of a plain response, trailers and an SSE comment of a stream. */
  private publish(plan: ProtectionPlan, req: GatewayRequest, res: GatewayResponse): void {
    const value = plan.report.toString();
    req.ctx.protections = value;
    if (!res.headersSent) {
      plan.report.writeTo(res);
      writeProtectionUsage(req, res);
      return;
    }
    const trailers: Record<string, string> = { [PROTECTIONS_HEADER]: value };
    const usage = req.ctx.protectionUsage;
    if (usage !== undefined && usage.length > 0) {
      trailers[PROTECTIONS_USAGE_HEADER] = protectionUsageHeader(usage);
    }
    if (!res.writableEnded) {
      // Comments are part of the SSE grammar and ignored by every client: visible in curl.
      res.write(
        Object.entries(trailers)
          .map(([name, v]) => `: ${name}: ${v}\n`)
          .join('') + '\n',
      );
      res.addTrailers(trailers);
    }
  }
}
