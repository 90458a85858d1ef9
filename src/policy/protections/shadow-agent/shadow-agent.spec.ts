import type { JudgeCall, JudgeClient, JudgeResult } from '../judge/judge-client';
import { defaultShadowSettings } from './settings';
import { makeShadowJudge } from './shadow-agent';
import { UnparseableVerdictError } from './shadow-agent.operator';

function result(text: string): JudgeResult {
  return {
    text,
    model: 'judge-mini',
    usage: { inputTokens: 500, outputTokens: 10 },
    costUsd: 0.0002,
    latencyMs: 12,
  };
}

function fakeClient(text: string): { client: JudgeClient; calls: JudgeCall[] } {
  const calls: JudgeCall[] = [];
  const client = {
    call: (call: JudgeCall) => {
      calls.push(call);
      return Promise.resolve(result(text));
    },
  } as unknown as JudgeClient;
  return { client, calls };
}

const SETTINGS = {
  ...defaultShadowSettings('judge-mini', 3000),
  scope: 'tool_calls' as const,
  policy: 'No transfers.',
  model: 'judge-mini',
};
const CONTEXT = { systemPrompt: 'Be a bank assistant.', lastUserTurn: 'Send 5 EUR' };
const CANDIDATE = { text: 'Sending.', toolCalls: [{ name: 'transfer', arguments: '{"a":5}' }] };

describe('makeShadowJudge', () => {
  it('asks the settings model with the judge prompt, timeout, request id and signal', async () => {
    const { client, calls } = fakeClient('{"verdict":"block","reason":"transfer; not allowed"}');
    const signal = new AbortController().signal;
    const verdict = await makeShadowJudge(client, SETTINGS, CONTEXT, 'req-9')(CANDIDATE, signal);
    expect(verdict).toEqual({
      verdict: 'block',
      reason: 'transfer not allowed',
      judge: result('{"verdict":"block","reason":"transfer; not allowed"}'),
    });
    expect(calls).toHaveLength(1);
    const call = calls[0];
    expect(call).toMatchObject({
      modelId: 'judge-mini',
      timeoutMs: 3000,
      requestId: 'req-9',
      signal,
    });
    expect(call.system).toContain('Review only CANDIDATE_TOOL_CALLS');
    expect(call.user).toContain('No transfers.');
    expect(call.user).toContain('Send 5 EUR');
    expect(call.user).toContain('Tool call 1: transfer\nArguments: {"a":5}');
  });

  it('rejects an answer without a verdict, keeping the call usage', async () => {
    const { client } = fakeClient('I think it is fine.');
    const error = await makeShadowJudge(
      client,
      SETTINGS,
      CONTEXT,
      'r',
    )(CANDIDATE, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnparseableVerdictError);
    expect((error as UnparseableVerdictError).judge).toEqual(result('I think it is fine.'));
    expect((error as Error).message).toContain('without a parseable verdict');
    expect((error as Error).message).not.toContain('fine');
  });

  it('lets a failed judge call through', async () => {
    const failure = new Error('timeout');
    const client = { call: () => Promise.reject(failure) } as unknown as JudgeClient;
    await expect(
      makeShadowJudge(client, SETTINGS, CONTEXT, 'r')(CANDIDATE, new AbortController().signal),
    ).rejects.toBe(failure);
  });

  it('cancels the call when the client goes away, as when the operator aborts', async () => {
    const calls: JudgeCall[] = [];
    const client = {
      call: (call: JudgeCall) => {
        calls.push(call);
        return new Promise<JudgeResult>((_resolve, reject) =>
          call.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        );
      },
    } as unknown as JudgeClient;
    for (const who of ['client', 'operator'] as const) {
      const gone = new AbortController();
      const operator = new AbortController();
      const pending = makeShadowJudge(
        client,
        SETTINGS,
        CONTEXT,
        'r',
        gone.signal,
      )(CANDIDATE, operator.signal);
      expect(calls[calls.length - 1].signal?.aborted).toBe(false);
      (who === 'client' ? gone : operator).abort();
      await expect(pending).rejects.toThrow('aborted');
    }
  });
});
