import { clientGoneSignal } from '../../../common/client-gone';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { MonoTypeOperatorFunction } from 'rxjs';
import { InvalidRequestError } from '../../../common/errors/gateway-errors';
import type { AllConfig } from '../../../config';
import type { CanonicalEvent } from '../../../core/canonical';
import { JudgeClient } from '../judge/judge-client';
import { type OutputContext, type Protection, RegisterProtection } from '../protection';
import { type ProtectionTool, SHADOW_AGENT_TOOL } from '../protection-facts';
import { recordProtectionUsage } from '../protection-usage';
import { ProtectionsHealth } from '../protections-health';
import { judgePromptBound, shadowContextOf } from './prompt';
import { type ShadowSettings, defaultShadowSettings, parseShadowSettings } from './settings';
import { makeShadowJudge } from './shadow-agent';
import { type ShadowOutcome, shadowValidation } from './shadow-agent.operator';

type ResolvedShadowSettings = ShadowSettings & { model: string };

/** `shadow_agent_validation`: a second catalog model judges the answer before it is let out. */
@RegisterProtection({ order: 30 })
@Injectable()
export class ShadowAgentProtection implements Protection<ResolvedShadowSettings>, OnModuleInit {
  readonly name = SHADOW_AGENT_TOOL;
  private readonly logger = new Logger('Protections');
  private readonly defaults: ShadowSettings;

  constructor(
    private readonly judge: JudgeClient,
    private readonly health: ProtectionsHealth,
    config: ConfigService<AllConfig, true>,
  ) {
    const protections = config.get('protections', { infer: true });
    this.defaults = defaultShadowSettings(
      protections.shadowAgentModel,
      protections.shadowAgentTimeoutMs,
    );
  }

  /** The operator's SHADOW_AGENT_MODEL must be a catalog model. */
  onModuleInit(): void {
    this.judge.checkAtBoot('SHADOW_AGENT_MODEL', this.defaults.model, this.logger);
  }

  settings(tool: ProtectionTool | undefined): ResolvedShadowSettings {
    const settings = tool
      ? parseShadowSettings(
          tool.schema,
          tool.schemaParam,
          tool.description,
          tool.descriptionParam ?? 'tools',
          this.defaults,
        )
      : this.defaults;
    if (settings.model === undefined) {
      throw new InvalidRequestError(
        `'${this.name}' needs a judge model: set a 'model' setting in the tool's schema (the operator configured no SHADOW_AGENT_MODEL).`,
        tool?.schemaParam ?? 'tools',
        'invalid_protection_settings',
      );
    }
    if (settings.modelParam !== undefined) {
      // A model the client named must exist: 400 now. The operator's default was checked at
      // boot; if its provider cannot be called now, the judge call fails and on_error decides.
      this.judge.resolve(settings.model, settings.modelParam);
    }
    return { ...settings, model: settings.model };
  }

  /** One judge call per answer, its prompt at its bound (see judgePromptBound). */
  worstCaseCost(settings: ResolvedShadowSettings, promptChars: number): bigint {
    return this.judge.worstCase(
      settings.model,
      judgePromptBound(settings.policy, settings.scope, promptChars),
      1,
    );
  }

  output(
    settings: ResolvedShadowSettings,
    ctx: OutputContext,
  ): MonoTypeOperatorFunction<CanonicalEvent> {
    const { req, res, report } = ctx;
    // A client that leaves cancels the judge: an unstreamed answer's events are never
    // unsubscribed, so the judge would otherwise run (and bill) until its timeout.
    const gone = clientGoneSignal(res);
    const judge = makeShadowJudge(
      this.judge,
      settings,
      shadowContextOf(ctx.request),
      req.ctx.requestId,
      gone,
    );
    return shadowValidation(settings, judge, (outcome: ShadowOutcome) => {
      if (outcome.judge) {
        recordProtectionUsage(req, this.name, outcome.judge);
      }
      if (outcome.verdict === 'error' && gone.aborted) {
        // Cancelled for a client that left: no verdict to count, as for a stream.
        return;
      }
      if (outcome.verdict === 'error') {
        this.health.recordError(this.name);
      }
      this.health.record(this.name, outcome.decision);
      const details: Record<string, string> = {};
      if (outcome.verdict === 'error') {
        details.error = outcome.error ?? 'judge failed';
      } else if (outcome.decision !== 'pass' && outcome.reason) {
        details.reason = outcome.reason;
      }
      report.set(this.name, outcome.decision, details);
      if (outcome.decision !== 'pass' || outcome.verdict === 'error') {
        this.logger.warn(
          `${this.name} ${outcome.decision} request ${req.ctx.requestId}: verdict=${outcome.verdict} scope=${settings.scope} model=${settings.model}${outcome.error ? ` error=${outcome.error}` : ''}`,
        );
      }
    });
  }
}
