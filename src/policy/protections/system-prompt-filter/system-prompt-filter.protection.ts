import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type MonoTypeOperatorFunction, tap } from 'rxjs';
import type { AllConfig } from '../../../config';
import type { CanonicalEvent } from '../../../core/canonical';
import {
  counterFor,
  countTexts,
  estimatePromptTokens,
  familyProfile,
} from '../../../limits/tokens/token-estimator';
import { type OutputContext, type Protection, RegisterProtection } from '../protection';
import { type ProtectionTool, SYSTEM_PROMPT_FILTER_TOOL } from '../protection-facts';
import { ProtectionsHealth } from '../protections-health';
import { promptShapeOf } from './prompt-shape';
import { takeSecrets } from './secrets';
import { type FilterSettings, defaultFilterSettings, parseFilterSettings } from './settings';
import { type LeakReport, systemPromptFilter } from './system-prompt-filter.operator';

/** `system_prompt_filter`: keeps the system prompt (or its `<secret>` spans) out of the answer. */
@RegisterProtection({ order: 20 })
@Injectable()
export class SystemPromptFilterProtection implements Protection<FilterSettings> {
  readonly name = SYSTEM_PROMPT_FILTER_TOOL;
  private readonly logger = new Logger('Protections');
  private readonly defaults: FilterSettings;

  constructor(
    private readonly health: ProtectionsHealth,
    config: ConfigService<AllConfig, true>,
  ) {
    this.defaults = defaultFilterSettings(
      config.get('protections', { infer: true }).systemPromptFilterMinOverlap,
    );
  }

  settings(tool: ProtectionTool | undefined): FilterSettings {
    return tool ? parseFilterSettings(tool.schema, tool.schemaParam, this.defaults) : this.defaults;
  }

  output(settings: FilterSettings, ctx: OutputContext): MonoTypeOperatorFunction<CanonicalEvent> {
    // Before the request goes upstream: the `<secret>` markers must not reach the model.
    const secrets = takeSecrets(ctx.request.system);
    const profile = familyProfile(ctx.model.family);
    const requestId = ctx.req.ctx.requestId;
    let leaks = 0;
    let blocked = false;
    const settle = (): void => {
      const verdict = blocked ? 'blocked' : leaks > 0 ? 'redacted' : 'pass';
      ctx.report.set(this.name, verdict, leaks > 0 ? { leaks } : {});
      this.health.record(this.name, verdict);
    };
    const filter = systemPromptFilter(secrets, settings, {
      onLeak: (leak: LeakReport) => {
        leaks++;
        blocked ||= leak.action === 'block';
        // Never the text: where it leaked and how long the run was.
        this.logger.warn(
          `${this.name} ${leak.action === 'block' ? 'blocked' : 'redacted'} request ${requestId}: ${leak.words} words of the system prompt in ${leak.channel}`,
        );
      },
      countTokens: (text) =>
        Math.ceil(countTexts([text], counterFor(profile.encoding)) * profile.factor),
      // Chat and Responses upstreams report input usage only at the end, which a cut never reaches.
      inputTokens: () => estimatePromptTokens(promptShapeOf(ctx.request), ctx.model.family),
    });
    // A failed answer still reports (and counts) a leak it had already caught; without one
    // there is no verdict, and the runner reports `error`.
    const settleIfLeaked = (): void => {
      if (leaks > 0) {
        settle();
      }
    };
    return (events) => events.pipe(filter, tap({ complete: settle, error: settleIfLeaked }));
  }
}
