import type { JudgeClient } from '../judge/judge-client';
import { type ShadowContext, buildJudgePrompt, parseVerdict } from './prompt';
import { type ShadowJudge, UnparseableVerdictError } from './shadow-agent.operator';
import type { ShadowSettings } from './settings';

/**
 * The judge of one request: asks `settings.model` about a candidate against the request's
 * system prompt, last user turn and policy. An answer without a verdict rejects with
 * UnparseableVerdictError, which still carries the call's usage and cost. `clientGone`
 * (aborted when the client's connection closes) cancels the call too: an unstreamed
 * answer's events are never unsubscribed, so the operator's own signal alone would let the
 * judge run, and bill, until its timeout for a client that is no longer there.
 */
export function makeShadowJudge(
  client: JudgeClient,
  settings: ShadowSettings & { model: string },
  context: ShadowContext,
  requestId: string,
  clientGone?: AbortSignal,
): ShadowJudge {
  return async (candidate, signal) => {
    const prompt = buildJudgePrompt(context, settings.policy, candidate, settings.scope);
    const judge = await client.call({
      modelId: settings.model,
      system: prompt.system,
      user: prompt.user,
      timeoutMs: settings.timeoutMs,
      requestId,
      signal: clientGone ? AbortSignal.any([signal, clientGone]) : signal,
    });
    const verdict = parseVerdict(judge.text);
    if (!verdict) {
      throw new UnparseableVerdictError(judge);
    }
    return { ...verdict, judge };
  };
}
