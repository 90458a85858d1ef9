import type { JudgeClient } from '../judge/judge-client';
import { type ShadowContext, buildJudgePrompt, parseVerdict } from './prompt';
import { type ShadowJudge, UnparseableVerdictError } from './shadow-agent.operator';
import type { ShadowSettings } from './settings';

/**
 * The judge of one request: asks `settings.model` about a candidate against the request's
 * system prompt, last user turn and policy. An answer without a verdict rejects with
 * UnparseableVerdictError, which still carries the call's usage and cost.
 */
export function makeShadowJudge(
  client: JudgeClient,
  settings: ShadowSettings & { model: string },
  context: ShadowContext,
  requestId: string,
): ShadowJudge {
  return async (candidate, signal) => {
    const prompt = buildJudgePrompt(context, settings.policy, candidate, settings.scope);
    const judge = await client.call({
      modelId: settings.model,
      system: prompt.system,
      user: prompt.user,
      timeoutMs: settings.timeoutMs,
      requestId,
      signal,
    });
    const verdict = parseVerdict(judge.text);
    if (!verdict) {
      throw new UnparseableVerdictError(judge);
    }
    return { ...verdict, judge };
  };
}
