import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InvalidRequestError } from '../../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../../common/request-context';
import type { AllConfig } from '../../../config';
import type { InjectionSettings } from './injection-settings';
import { JudgeClient } from '../judge/judge-client';
import { detectInjection, type InjectionResult, MAX_SCAN_PARTS } from './detector';
import type { LabeledPart } from '../protection-facts';
import { PROMPT_INJECTION_TOOL } from '../protection-facts';
import type { ProtectionReport } from '../protection-report';
import { ProtectionsHealth, type ProtectionVerdict } from '../protections-health';
import {
  type BackendVerdict,
  DetectorBackendFailure,
  DetectorUnavailableError,
  type InjectionDetectorBackend,
} from './backends/detector-backend';
import { InjectionDetectors } from './backends/detector-registry';
import {
  DETECTOR_TEXT_CHARS,
  type DetectorView,
  detectorView,
  judgeVerdict,
} from './backends/judge-verdict';
import { VerdictCache } from './backends/verdict-cache';

export { DETECTOR_TEXT_CHARS, detectorView } from './backends/judge-verdict';
export type { DetectorView } from './backends/judge-verdict';

const TOP_SIGNALS = 3;
/** An in-process backend has no deadline and nothing to cancel. */
const NEVER_ABORTED = new AbortController().signal;
/** Scores this close to the threshold are uncertain: the second stage, if set, is asked. */
export const UNCERTAIN_MARGIN = 0.2;
/** Detector-model calls per request at most (the most suspicious uncertain parts). */
export const MAX_DETECTOR_CALLS = 3;
/** One deadline for all the detector-model calls of a request. */
export const DETECTOR_TIMEOUT_MS = 5000;
export class PromptInjectionDetectedError extends InvalidRequestError {
  constructor(message: string, param: string | null) {
    super(message, param, 'prompt_injection_detected');
  }
}

/** `messages[3] (tool result)` → `messages[3]`: the field the OpenAI envelope's `param` names. */
function paramOf(where: string): string {
  return where.replace(/\s*\(.*\)$/, '');
}

/** One scanned part and how its verdict was reached. */
interface PartDecision {
  part: LabeledPart;
  result: InjectionResult;
  /** The local detector's verdict (true: injection). */
  local: boolean;
  /** The final verdict. */
  final: boolean;
  /** The final verdict is the detector model's and differs from the local one. */
  byModel: boolean;
}

/**
 * `prompt_injection_protection`: the local detector over the parts the settings scan and,
 * when a `detector_model` is set, a catalog model's verdict on each uncertain part.
 *
 * Each part is decided on its own. A score at least UNCERTAIN_MARGIN above the threshold is
 * an injection, at least that far below it benign, without asking. A part in between is
 * uncertain: the most suspicious MAX_DETECTOR_CALLS of them are each asked (concurrently,
 * one deadline); the model may turn a part into an injection, and clear it only when it saw
 * the whole part. Parts not asked, and parts whose call failed, keep the local verdict. The
 * request is an injection when any part is.
 */
@Injectable()
export class PromptInjectionCheck {
  private readonly logger = new Logger('Protections');

  private readonly cache: VerdictCache;

  constructor(
    private readonly health: ProtectionsHealth,
    private readonly judge: JudgeClient,
    private readonly detectors: InjectionDetectors,
    config: ConfigService<AllConfig, true>,
  ) {
    const { cacheSize } = config.get('protections', { infer: true }).promptInjectionDetectors;
    this.cache = new VerdictCache(cacheSize);
  }

  /** Records the verdict in `report`; throws PromptInjectionDetectedError on a block. */
  async run(
    all: LabeledPart[],
    settings: InjectionSettings,
    req: GatewayRequest,
    res: GatewayResponse,
    report: ProtectionReport,
  ): Promise<void> {
    const { threshold } = settings;
    const scanned = all.filter((p) => settings.sources.includes(p.source));
    // As scanParts: the most recent MAX_SCAN_PARTS parts, each on its own, empty ones skipped.
    const parts = scanned
      .slice(Math.max(0, scanned.length - MAX_SCAN_PARTS))
      .filter((p) => p.text.trim() !== '');
    const backend = this.detectors.get(settings.detector, settings.detectorParam ?? 'detector');
    let verdicts: readonly BackendVerdict[];
    let failed: string | undefined;
    if (backend.remote) {
      try {
        verdicts = await this.remoteVerdicts(backend, parts, settings, req, res);
      } catch (error) {
        if (!(error instanceof DetectorBackendFailure)) {
          throw error;
        }
        this.health.recordError(PROMPT_INJECTION_TOOL);
        this.logger.warn(
          `${PROMPT_INJECTION_TOOL} detector ${backend.name} failed (request ${req.ctx.requestId}): ${error.message}; fail mode ${settings.failMode}`,
        );
        if (settings.failMode === 'closed') {
          report.set(PROMPT_INJECTION_TOOL, 'error', { detector: backend.name });
          throw new DetectorUnavailableError(backend.name, error.kind);
        }
        failed = backend.name;
        verdicts = parts.map((p) => detectInjection(p.text, { threshold, source: p.source }));
      }
    } else {
      const scored = backend.score(parts, {
        settings,
        req,
        signal: NEVER_ABORTED,
        deadline: Infinity,
      });
      verdicts = scored instanceof Promise ? await scored : scored;
    }
    const decisions: PartDecision[] = parts.map((part, i) => {
      const { score, signals } = verdicts[i];
      const local = score >= threshold;
      const result: InjectionResult = { score, signals, verdict: local ? 'injection' : 'benign' };
      return { part, result, local, final: local, byModel: false };
    });
    // The second stage refines in-process scores; a remote backend's verdict is final.
    if (settings.detectorModel !== undefined && (!backend.remote || failed !== undefined)) {
      await this.secondStage(settings.detectorModel, decisions, threshold, req, res);
    }
    const detector = failed === undefined ? backend.name : 'local';

    const localInjection = decisions.some((d) => d.local);
    const injected = decisions.filter((d) => d.final);
    // The part named: the highest-scoring one whose local verdict stands, else the model's.
    const standing = injected.filter((d) => !d.byModel);
    const blamed = [...(standing.length > 0 ? standing : injected)].sort(
      (a, b) => b.result.score - a.result.score,
    )[0];
    const injection = blamed !== undefined;
    // The model decided when the outcome is not the local one, or rests on its verdict alone.
    const byModel = injection !== localInjection || blamed?.byModel === true;
    const stage = byModel ? 'model' : 'local';
    const verdict: ProtectionVerdict = !injection
      ? 'pass'
      : settings.action === 'block'
        ? 'blocked'
        : 'flagged';
    const maxScore = decisions.reduce((max, d) => Math.max(max, d.result.score), 0);
    const score = maxScore.toFixed(2);
    report.set(PROMPT_INJECTION_TOOL, verdict, {
      score,
      ...(byModel ? { stage } : {}),
      // An in-process verdict (the built-in model, the default) goes unnamed; a remote
      // backend is named, and so is the local model standing in for a failed one.
      ...(backend.remote ? { detector } : {}),
      ...(failed === undefined ? {} : { failed }),
    });
    this.health.record(PROMPT_INJECTION_TOOL, verdict);
    if (blamed === undefined) {
      return;
    }
    const signals = blamed.result.signals.slice(0, TOP_SIGNALS).map((s) => s.name);
    const signalList = signals.length > 0 ? signals.join(', ') : 'none';
    const partScore = blamed.result.score.toFixed(2);
    const { where, source } = blamed.part;
    // Never the text: where it was, the scores and the signal names only.
    this.logger.warn(
      `${PROMPT_INJECTION_TOOL} ${verdict} request ${req.ctx.requestId}: ${where} (${source}) score=${partScore} threshold=${threshold} detector=${detector} stage=${stage} parts=${injected.length} signals=${signalList}`,
    );
    if (verdict === 'blocked') {
      throw new PromptInjectionDetectedError(
        `Request blocked by ${PROMPT_INJECTION_TOOL} (prompt_injection_detected): ${where} scored ${partScore} (threshold ${threshold}${blamed.byModel ? ', confirmed by the detector model' : ''}); signals: ${signalList}.`,
        paramOf(where),
      );
    }
  }

  /**
   * Asks the detector model about the uncertain parts whose verdict could change the
   * outcome, and applies its answers to `decisions`.
   */
  private async secondStage(
    modelId: string,
    decisions: PartDecision[],
    threshold: number,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<void> {
    const candidates = decisions.filter(
      (d) =>
        Math.abs(d.result.score - threshold) < UNCERTAIN_MARGIN &&
        // The model can only confirm an injection it cannot see whole: no call changes it.
        !(d.local && d.part.text.length > DETECTOR_TEXT_CHARS),
    );
    candidates.sort((a, b) => b.result.score - a.result.score);
    const chosen = new Set(candidates.slice(0, MAX_DETECTOR_CALLS));
    // A part that stays an injection whatever the model says (a certain one, one seen only in
    // excerpts, one beyond the cap) decides the request: no call could change the outcome.
    if (chosen.size === 0 || decisions.some((d) => d.local && !chosen.has(d))) {
      return;
    }
    const asked = [...chosen].map((decision) => ({
      decision,
      view: detectorView(decision.part.text, decision.result.signals),
    }));

    // A client that goes away cancels the detector calls too.
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    res.once('close', onClose);
    const deadline = Date.now() + DETECTOR_TIMEOUT_MS;
    try {
      const answers = await Promise.all(
        asked.map(({ view }) => this.askDetector(modelId, view, deadline, req, gone.signal)),
      );
      asked.forEach(({ decision, view }, i) => {
        const answer = answers[i];
        if (answer === 'injection' || (answer === 'benign' && view.whole)) {
          decision.final = answer === 'injection';
          decision.byModel = decision.final !== decision.local;
        }
      });
    } finally {
      res.off('close', onClose);
    }
  }

  /** The detector model's verdict on one part, or undefined when it gave none. */
  private async askDetector(
    modelId: string,
    view: DetectorView,
    deadline: number,
    req: GatewayRequest,
    signal: AbortSignal,
  ): Promise<'injection' | 'benign' | undefined> {
    try {
      const verdict = await judgeVerdict(this.judge, modelId, view, { deadline, req, signal });
      if (verdict !== undefined) {
        return verdict;
      }
      this.logger.warn(
        `${PROMPT_INJECTION_TOOL} detector model ${modelId} gave no verdict (request ${req.ctx.requestId}); the local verdict stands`,
      );
    } catch (error) {
      if (signal.aborted) {
        // The client went away: nobody waits for the verdict, and the model did not fail.
        return undefined;
      }
      this.logger.warn(
        `${PROMPT_INJECTION_TOOL} detector model ${modelId} failed (request ${req.ctx.requestId}): ${(error as Error).message}; the local verdict stands`,
      );
    }
    this.health.recordError(PROMPT_INJECTION_TOOL);
    return undefined;
  }

  /**
   * A remote backend's verdicts, the cached ones without a call: one deadline
   * (settings.timeoutMs) for all its calls, cancelled when the client goes away. Rejects
   * with DetectorBackendFailure; a backend that ignores its signal is not waited for.
   */
  private async remoteVerdicts(
    backend: InjectionDetectorBackend,
    parts: readonly LabeledPart[],
    settings: InjectionSettings,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<BackendVerdict[]> {
    const variant = backend.variant?.(settings);
    const keys = parts.map((p) => VerdictCache.key(backend.name, variant, p.text));
    const scores = keys.map((k) => this.cache.get(k));
    const missing = parts.map((_, i) => i).filter((i) => scores[i] === undefined);
    if (missing.length > 0) {
      const controller = new AbortController();
      const deadline = Date.now() + settings.timeoutMs;
      let fail: (e: DetectorBackendFailure) => void = () => undefined;
      const failed = new Promise<never>((_, reject) => {
        fail = reject;
      });
      const stop = (e: DetectorBackendFailure): void => {
        controller.abort(e);
        fail(e);
      };
      const timer = setTimeout(
        () =>
          stop(new DetectorBackendFailure('timeout', `no verdict within ${settings.timeoutMs} ms`)),
        settings.timeoutMs,
      );
      const onClose = (): void =>
        stop(new DetectorBackendFailure('aborted', 'the client went away'));
      res.once('close', onClose);
      try {
        const call = { settings, req, signal: controller.signal, deadline };
        const answered = await Promise.race([
          Promise.resolve(
            backend.score(
              missing.map((i) => parts[i]),
              call,
            ),
          ),
          failed,
        ]);
        missing.forEach((i, k) => {
          scores[i] = answered[k].score;
          this.cache.set(keys[i], answered[k].score);
        });
      } finally {
        clearTimeout(timer);
        res.off('close', onClose);
      }
    }
    return scores.map((score) => ({ score: score ?? 0, signals: [] }));
  }
}
