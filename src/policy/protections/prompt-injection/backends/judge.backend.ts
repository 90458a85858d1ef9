import { Injectable } from '@nestjs/common';
import { JudgeClient, JudgeError } from '../../judge/judge-client';
import { invalidSetting } from '../../protection-settings';
import { detectInjection } from '../detector';
import type { InjectionSettings } from '../injection-settings';
import {
  type BackendCall,
  type BackendPart,
  type BackendVerdict,
  DetectorBackendFailure,
  type InjectionDetectorBackend,
  RegisterInjectionDetector,
} from './detector-backend';
import { DETECTOR_TEXT_CHARS, judgeVerdict } from './judge-verdict';

/** The name a request's `detector` setting gives this backend. */
export const JUDGE_DETECTOR = 'judge';
/** Judge calls per request at most; the parts the local model finds most suspicious first. */
export const MAX_JUDGE_CALLS = 8;

/** Pieces of `text` the judge sees whole: DETECTOR_TEXT_CHARS each, head and tail first. */
function pieces(text: string, budget: number): { views: string[]; whole: boolean } {
  const all: string[] = [];
  for (let at = 0; at < text.length; at += DETECTOR_TEXT_CHARS) {
    all.push(text.slice(at, at + DETECTOR_TEXT_CHARS));
  }
  if (all.length <= budget) {
    return { views: all, whole: true };
  }
  const head = Math.ceil(budget / 2);
  return {
    views: [...all.slice(0, head), ...all.slice(all.length - (budget - head))],
    whole: false,
  };
}

/**
 * `detector: judge`: a catalog model (the request's `detector_model`, or
 * PROMPT_INJECTION_DETECTOR_MODEL) decides each part, with the prompt of judge-verdict.ts
 * and a strict JSON verdict: injection scores 1, benign 0. A part longer than
 * DETECTOR_TEXT_CHARS is judged in pieces (an injection in any piece decides); at most
 * MAX_JUDGE_CALLS calls per request go to the parts the local model finds most suspicious,
 * and the parts (or the middles of parts) it does not see keep the local model's score.
 */
@RegisterInjectionDetector(true)
@Injectable()
export class JudgeDetector implements InjectionDetectorBackend {
  readonly name = JUDGE_DETECTOR;
  readonly remote = true;

  constructor(private readonly judge: JudgeClient) {}

  variant(settings: InjectionSettings): string | undefined {
    return settings.detectorModel;
  }

  check(settings: InjectionSettings, param: string): void {
    if (settings.detectorModel === undefined) {
      throw invalidSetting(
        param,
        "the 'judge' detector needs a detector_model (or PROMPT_INJECTION_DETECTOR_MODEL).",
      );
    }
  }

  async score(parts: readonly BackendPart[], call: BackendCall): Promise<BackendVerdict[]> {
    const modelId = call.settings.detectorModel as string;
    const texts = parts.map((p) => p.text);
    const local = parts.map(({ text, source }) => detectInjection(text, { source }));
    const order = texts.map((_, i) => i).sort((a, b) => local[b].score - local[a].score);
    const asks: { index: number; text: string }[] = [];
    const whole = texts.map(() => false);
    for (const index of order) {
      const left = MAX_JUDGE_CALLS - asks.length;
      if (left <= 0) {
        break;
      }
      const p = pieces(texts[index], left);
      whole[index] = p.whole;
      asks.push(...p.views.map((text) => ({ index, text })));
    }
    const answers = await Promise.all(asks.map((a) => this.ask(modelId, a.text, call)));
    const injected = texts.map(() => false);
    asks.forEach((a, k) => {
      injected[a.index] ||= answers[k] === 'injection';
    });
    return texts.map((_, i) => ({
      score: injected[i] ? 1 : whole[i] ? 0 : local[i].score,
      signals: [],
    }));
  }

  private async ask(
    modelId: string,
    text: string,
    call: BackendCall,
  ): Promise<'injection' | 'benign'> {
    let verdict: 'injection' | 'benign' | undefined;
    try {
      verdict = await judgeVerdict(this.judge, modelId, { text, whole: true }, call);
    } catch (e) {
      const reason: unknown = call.signal.reason;
      if (call.signal.aborted && reason instanceof DetectorBackendFailure) {
        throw reason;
      }
      const kind = e instanceof JudgeError && e.kind === 'timeout' ? 'timeout' : 'unavailable';
      throw new DetectorBackendFailure(kind, (e as Error).message, { cause: e });
    }
    if (verdict === undefined) {
      throw new DetectorBackendFailure('bad_response', `judge ${modelId} gave no JSON verdict`);
    }
    return verdict;
  }
}
