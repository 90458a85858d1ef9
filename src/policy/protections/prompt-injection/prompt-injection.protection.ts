import { type OnApplicationBootstrap, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../../../config';
import {
  type InjectionSettings,
  defaultInjectionSettings,
  parseInjectionSettings,
} from './injection-settings';
import { JudgeClient } from '../judge/judge-client';
import { type Protection, type ProtectionContext, RegisterProtection } from '../protection';
import { type LabeledPart, PROMPT_INJECTION_TOOL, type ProtectionTool } from '../protection-facts';
import { warmUpDetector } from './detector';
import { InjectionDetectors } from './backends/detector-registry';
import { JUDGE_DETECTOR, MAX_JUDGE_CALLS } from './backends/judge.backend';
import { judgeCallBound } from './backends/judge-verdict';
import { MAX_DETECTOR_CALLS, PromptInjectionCheck } from './prompt-injection.check';

/** Long enough for app.listen() to finish after the module init hooks. */
const WARM_UP_DELAY_MS = 500;

/** `prompt_injection_protection`: scans what the client sent before the upstream call. */
@RegisterProtection({ order: 10 })
@Injectable()
export class PromptInjectionProtection
  implements Protection<InjectionSettings>, OnModuleInit, OnApplicationBootstrap
{
  readonly name = PROMPT_INJECTION_TOOL;
  private readonly logger = new Logger('Protections');
  private readonly defaults: InjectionSettings;

  constructor(
    private readonly scanner: PromptInjectionCheck,
    private readonly judge: JudgeClient,
    config: ConfigService<AllConfig, true>,
    private readonly detectors: InjectionDetectors,
  ) {
    const protections = config.get('protections', { infer: true });
    const backends = protections.promptInjectionDetectors;
    this.defaults = defaultInjectionSettings(
      protections.promptInjectionThreshold,
      protections.promptInjectionDetectorModel,
      backends === undefined
        ? undefined
        : {
            detector: backends.defaultBackend,
            failMode: backends.failMode,
            timeoutMs: backends.timeoutMs,
          },
    );
  }

  /**
   * Compiles the detector's patterns soon after boot, not on the first protected request,
   * and checks the operator's PROMPT_INJECTION_DETECTOR_MODEL. The compiling (~130 ms)
   * waits until the server is listening, off the cold start; a protected request that
   * comes first compiles what it needs itself.
   */
  onModuleInit(): void {
    setTimeout(warmUpDetector, WARM_UP_DELAY_MS).unref();
    const model = this.defaults.detectorModel;
    this.judge.checkAtBoot('PROMPT_INJECTION_DETECTOR_MODEL', model, this.logger);
  }

  /** The operator's default backend must be usable (found, configured) or the boot fails. */
  onApplicationBootstrap(): void {
    const setting = 'PROMPT_INJECTION_DETECTOR';
    this.detectors.get(this.defaults.detector, setting).check(this.defaults, setting);
  }

  settings(tool: ProtectionTool | undefined): InjectionSettings {
    const settings = tool
      ? parseInjectionSettings(tool.schema, tool.schemaParam, this.defaults)
      : this.defaults;
    // Only a model the client named is its mistake (a 400). The operator's default was
    // checked at boot; if it cannot be called now, its calls fail and the local verdict stands.
    if (settings.detectorModel !== undefined && settings.detectorModelParam !== undefined) {
      this.judge.resolve(settings.detectorModel, settings.detectorModelParam);
    }
    // A backend the request cannot use (unknown, not configured, a judge without a model) is
    // its 400; the operator's default was checked at boot.
    const param = settings.detectorParam ?? settings.detectorModelParam;
    if (param !== undefined) {
      this.detectors.get(settings.detector, param).check(settings, param);
    }
    return settings;
  }

  /**
   * The detector model's calls at most: the `judge` backend's, then the second stage's
   * (which also runs when that backend fails open), each at its bound.
   */
  worstCaseCost(settings: InjectionSettings, promptChars: number): bigint {
    if (settings.detectorModel === undefined) {
      return 0n;
    }
    const calls = MAX_DETECTOR_CALLS + (settings.detector === JUDGE_DETECTOR ? MAX_JUDGE_CALLS : 0);
    return this.judge.worstCase(settings.detectorModel, judgeCallBound(promptChars), calls);
  }

  check(
    settings: InjectionSettings,
    parts: () => LabeledPart[],
    ctx: ProtectionContext,
  ): Promise<void> {
    return this.scanner.run(parts(), settings, ctx.req, ctx.res, ctx.report);
  }
}
