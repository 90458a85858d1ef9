import { type MonoTypeOperatorFunction, Observable } from 'rxjs';
import type { CanonicalEvent } from '../../../core/canonical';
import { JudgeError, type JudgeResult } from '../judge/judge-client';
import { type ShadowCandidate, headerSafeReason } from './prompt';
import type { ShadowSettings } from './settings';

export type ShadowDecision = 'pass' | 'flagged' | 'blocked';

/** How one answer fared; reported once per completed answer. */
export interface ShadowOutcome {
  decision: ShadowDecision;
  verdict: 'allow' | 'block' | 'error' | 'skipped';
  /** Header-safe reason (the judge's, or why there was no verdict). */
  reason: string;
  /** Usage and cost of the judge call, when one answered (even unparseably). */
  judge?: JudgeResult;
  /** Why the judge failed; safe to log. */
  error?: string;
}

/**
 * Asks the judge about a candidate; rejects with JudgeError, or with
 * {@link UnparseableVerdictError} when the judge answered without a verdict.
 */
export type ShadowJudge = (
  candidate: ShadowCandidate,
  signal: AbortSignal,
) => Promise<{ verdict: 'allow' | 'block'; reason: string; judge: JudgeResult }>;

/** The judge answered, but not with a verdict; its usage is still reported. */
export class UnparseableVerdictError extends Error {
  constructor(readonly judge: JudgeResult) {
    super(`judge model '${judge.model}' answered without a parseable verdict`);
    this.name = 'UnparseableVerdictError';
  }
}

type Verdict = Awaited<ReturnType<ShadowJudge>>;

/** Why a judge call failed, in a form fit for a header and a log line. */
function failure(e: unknown): { reason: string; error: string; judge?: JudgeResult } {
  // The error may be reported in a header too.
  if (e instanceof UnparseableVerdictError) {
    return { reason: 'unparseable verdict', error: headerSafeReason(e.message), judge: e.judge };
  }
  if (e instanceof JudgeError) {
    return {
      reason: e.kind === 'timeout' ? 'judge timeout' : 'judge error',
      error: headerSafeReason(e.message),
    };
  }
  return {
    reason: 'judge error',
    error: e instanceof Error ? headerSafeReason(e.name) : 'unknown error',
  };
}

function decide(settings: ShadowSettings, result: Verdict | { error: unknown }): ShadowOutcome {
  if ('error' in result) {
    const f = failure(result.error);
    return {
      decision: settings.onError === 'block' ? 'blocked' : 'pass',
      verdict: 'error',
      ...f,
    };
  }
  const decision: ShadowDecision =
    result.verdict === 'allow' ? 'pass' : settings.action === 'block' ? 'blocked' : 'flagged';
  return { decision, verdict: result.verdict, reason: result.reason, judge: result.judge };
}

/** Text and tool calls of a run of events (reasoning is not part of the answer). */
function candidateOf(events: CanonicalEvent[], text: string): ShadowCandidate {
  const calls = new Map<number, { name: string; arguments: string }>();
  for (const e of events) {
    if (e.type === 'block_start' && e.block.kind === 'tool_call') {
      calls.set(e.index, { name: e.block.name, arguments: '' });
    } else if (e.type === 'text_delta') {
      text += e.text;
    } else if (e.type === 'tool_arguments_delta') {
      const call = calls.get(e.index);
      if (call) {
        call.arguments += e.json;
      }
    }
  }
  return { text, toolCalls: [...calls.values()] };
}

const indexed = (e: CanonicalEvent): e is Extract<CanonicalEvent, { index: number }> =>
  'index' in e;

/**
 * Holds an answer (scope `answer`) or its tool calls (scope `tool_calls`) until the judge
 * approves them. Blocked: the held part is dropped and the answer ends with finish reason
 * `content_filter` and the upstream's own usage. Flagged or allowed: the held part is
 * released unchanged. Block indexes are renumbered in emission order, because released
 * tool blocks may follow text that streamed past them (the accumulator indexes its
 * content array by them). Unsubscribing while the judge runs aborts the judge call.
 */
export function shadowValidation(
  settings: ShadowSettings,
  judge: ShadowJudge,
  onOutcome: (outcome: ShadowOutcome) => void,
): MonoTypeOperatorFunction<CanonicalEvent> {
  return (source) =>
    new Observable<CanonicalEvent>((subscriber) => {
      const controller = new AbortController();
      const held: CanonicalEvent[] = [];
      /** Upstream indexes of held tool blocks (scope tool_calls). */
      const heldBlocks = new Set<number>();
      /** Upstream block index -> emitted index. */
      const renumbered = new Map<number, number>();
      let liveText = '';
      let stopped = false;
      let sourceDone = false;
      let judging = false;
      let timer: ReturnType<typeof setTimeout> | undefined;

      const emit = (event: CanonicalEvent): void => {
        if (!indexed(event)) {
          subscriber.next(event);
          return;
        }
        if (event.type === 'block_start') {
          renumbered.set(event.index, renumbered.size);
        }
        const index = renumbered.get(event.index) ?? event.index;
        subscriber.next(index === event.index ? event : { ...event, index });
      };

      const finish = (outcome: ShadowOutcome, stop: CanonicalEvent & { type: 'message_stop' }) => {
        try {
          onOutcome(outcome);
        } catch (e) {
          subscriber.error(e);
          return;
        }
        if (outcome.decision === 'blocked') {
          if (settings.scope === 'answer') {
            // The message_start only: nothing of the answer reaches the client.
            held.filter((e) => e.type === 'message_start').forEach(emit);
          }
          emit({ type: 'message_stop', finishReason: 'content_filter', usage: stop.usage });
        } else {
          held.forEach(emit);
          emit(stop);
        }
        held.length = 0;
        if (sourceDone) {
          subscriber.complete();
        }
      };

      const review = (stop: CanonicalEvent & { type: 'message_stop' }): void => {
        const skip = (reason: string): void =>
          finish({ decision: 'pass', verdict: 'skipped', reason }, stop);
        if (stop.finishReason === 'content_filter') {
          skip('already filtered');
          return;
        }
        if (settings.scope === 'tool_calls' && heldBlocks.size === 0) {
          skip('no tool calls');
          return;
        }
        judging = true;
        const candidate = candidateOf(held, liveText);
        const verdict = new Promise<Verdict>((resolve, reject) => {
          // A backstop for any judge: the stream never waits longer than the setting.
          timer = setTimeout(() => {
            controller.abort();
            reject(
              new JudgeError('timeout', `the judge did not answer within ${settings.timeoutMs} ms`),
            );
          }, settings.timeoutMs);
          Promise.resolve()
            .then(() => judge(candidate, controller.signal))
            .then(resolve, reject);
        });
        verdict
          .then(
            (v): Verdict | { error: unknown } => v,
            (error: unknown) => ({ error }),
          )
          .then((result) => {
            clearTimeout(timer);
            judging = false;
            if (!subscriber.closed) {
              finish(decide(settings, result), stop);
            }
          })
          .catch((e: unknown) => subscriber.error(e));
      };

      const subscription = source.subscribe({
        next(event) {
          if (stopped) {
            return;
          }
          if (event.type === 'message_stop') {
            stopped = true;
            review(event);
            return;
          }
          if (settings.scope === 'answer') {
            held.push(event);
            return;
          }
          if (event.type === 'block_start' && event.block.kind === 'tool_call') {
            heldBlocks.add(event.index);
          }
          if (indexed(event) && heldBlocks.has(event.index)) {
            held.push(event);
            return;
          }
          if (event.type === 'text_delta') {
            liveText += event.text;
          }
          emit(event);
        },
        error(e: unknown) {
          controller.abort();
          subscriber.error(e);
        },
        complete() {
          sourceDone = true;
          // Ended without message_stop: the held part was never judged, so it is dropped.
          if (!judging) {
            subscriber.complete();
          }
        },
      });

      return () => {
        clearTimeout(timer);
        subscription.unsubscribe();
        controller.abort();
      };
    });
}
