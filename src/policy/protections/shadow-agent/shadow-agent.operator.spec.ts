import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { Subject, from, lastValueFrom, throwError, toArray, concat } from 'rxjs';
import { checkResponseStream } from '../../../../test/support/responses-fixtures';
import { collectResponse } from '../../../core/accumulate';
import type { CanonicalEvent, CanonicalUsage } from '../../../core/canonical';
import { ChatChunkEncoder } from '../../../formats/chat-completions/chat.encoder';
import { MessagesEventEncoder } from '../../../formats/messages/messages.encoder';
import { ResponsesStreamEncoder } from '../../../formats/responses/responses.encoder';
import { JudgeError, type JudgeResult } from '../judge/judge-client';
import { type ShadowSettings, defaultShadowSettings } from './settings';
import {
  type ShadowJudge,
  type ShadowOutcome,
  UnparseableVerdictError,
  shadowValidation,
} from './shadow-agent.operator';

const USAGE: CanonicalUsage = { inputTokens: 120, outputTokens: 30, cachedInputTokens: 20 };
const JUDGE: JudgeResult = {
  text: '{"verdict":"allow"}',
  model: 'judge-mini',
  usage: { inputTokens: 900, outputTokens: 12 },
  costUsd: 0.0012,
  latencyMs: 40,
};

const START: CanonicalEvent = {
  type: 'message_start',
  id: 'abc',
  model: 'upstream-model',
  created: 1_700_000_000,
  inputTokens: 120,
};
const STOP: CanonicalEvent = { type: 'message_stop', finishReason: 'tool_calls', usage: USAGE };

/** Reasoning, text, a tool call, then more text: held tool blocks get released after it. */
const ANSWER: CanonicalEvent[] = [
  START,
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Think.' },
  { type: 'reasoning_signature', index: 0, signature: 'sig' },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Sending ' },
  { type: 'text_delta', index: 1, text: 'now.' },
  { type: 'block_stop', index: 1 },
  { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'call_1', name: 'transfer' } },
  { type: 'tool_arguments_delta', index: 2, json: '{"amount":' },
  { type: 'tool_arguments_delta', index: 2, json: '5000}' },
  { type: 'block_stop', index: 2 },
  { type: 'block_start', index: 3, block: { kind: 'text' } },
  { type: 'text_delta', index: 3, text: ' Done.' },
  { type: 'block_stop', index: 3 },
  STOP,
];

/** What scope tool_calls lets through live: everything but the tool block, renumbered. */
const LIVE: CanonicalEvent[] = [
  START,
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Think.' },
  { type: 'reasoning_signature', index: 0, signature: 'sig' },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Sending ' },
  { type: 'text_delta', index: 1, text: 'now.' },
  { type: 'block_stop', index: 1 },
  { type: 'block_start', index: 2, block: { kind: 'text' } },
  { type: 'text_delta', index: 2, text: ' Done.' },
  { type: 'block_stop', index: 2 },
];
const RELEASED_TOOL: CanonicalEvent[] = [
  { type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'call_1', name: 'transfer' } },
  { type: 'tool_arguments_delta', index: 3, json: '{"amount":' },
  { type: 'tool_arguments_delta', index: 3, json: '5000}' },
  { type: 'block_stop', index: 3 },
];
const FILTERED: CanonicalEvent = {
  type: 'message_stop',
  finishReason: 'content_filter',
  usage: USAGE,
};

const TEXT_ONLY: CanonicalEvent[] = [
  START,
  { type: 'block_start', index: 0, block: { kind: 'text' } },
  { type: 'text_delta', index: 0, text: 'Hello.' },
  { type: 'block_stop', index: 0 },
  { type: 'message_stop', finishReason: 'stop', usage: USAGE },
];

function settings(overrides: Partial<ShadowSettings> = {}): ShadowSettings {
  return { ...defaultShadowSettings('judge-mini', 1000), ...overrides };
}

function answering(verdict: 'allow' | 'block', reason = 'because'): jest.Mock {
  return jest.fn<ReturnType<ShadowJudge>, Parameters<ShadowJudge>>(() =>
    Promise.resolve({ verdict, reason, judge: JUDGE }),
  );
}

function failing(error: Error): jest.Mock {
  return jest.fn<ReturnType<ShadowJudge>, Parameters<ShadowJudge>>(() => Promise.reject(error));
}

/** A judge that answers only when aborted, the way JudgeClient reacts to its signal. */
function hanging(): { judge: ShadowJudge; signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const judge: ShadowJudge = (_candidate, signal) =>
    new Promise((_resolve, reject) => {
      signals.push(signal);
      signal.addEventListener('abort', () => reject(new JudgeError('aborted', 'cancelled')));
    });
  return { judge, signals };
}

async function run(
  events: CanonicalEvent[],
  s: ShadowSettings,
  judge: ShadowJudge,
): Promise<{ out: CanonicalEvent[]; outcomes: ShadowOutcome[] }> {
  const outcomes: ShadowOutcome[] = [];
  const out = await lastValueFrom(
    from(events).pipe(
      shadowValidation(s, judge, (o) => outcomes.push(o)),
      toArray(),
    ),
  );
  return { out, outcomes };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('shadowValidation, scope answer', () => {
  it('judges the whole answer and releases it unchanged when allowed', async () => {
    let abortedWhenCalled: boolean | undefined;
    const judge = jest.fn<ReturnType<ShadowJudge>, Parameters<ShadowJudge>>((_c, signal) => {
      abortedWhenCalled = signal.aborted;
      return Promise.resolve({ verdict: 'allow', reason: 'fine', judge: JUDGE });
    });
    const { out, outcomes } = await run(ANSWER, settings(), judge);
    expect(out).toEqual(ANSWER);
    expect(judge).toHaveBeenCalledTimes(1);
    const [candidate] = judge.mock.calls[0];
    expect(candidate).toEqual({
      text: 'Sending now. Done.',
      toolCalls: [{ name: 'transfer', arguments: '{"amount":5000}' }],
    });
    expect(abortedWhenCalled).toBe(false);
    expect(outcomes).toEqual([
      { decision: 'pass', verdict: 'allow', reason: 'fine', judge: JUDGE },
    ]);
  });

  it('holds every event until the verdict', async () => {
    const source = new Subject<CanonicalEvent>();
    let approve!: () => void;
    const judge: ShadowJudge = () =>
      new Promise((resolve) => {
        approve = () => resolve({ verdict: 'allow', reason: '', judge: JUDGE });
      });
    const out: CanonicalEvent[] = [];
    let completed = false;
    source
      .pipe(shadowValidation(settings(), judge, () => undefined))
      .subscribe({ next: (e) => out.push(e), complete: () => (completed = true) });
    ANSWER.forEach((e) => source.next(e));
    source.complete();
    await flush();
    expect(out).toEqual([]);
    expect(completed).toBe(false);
    approve();
    await flush();
    expect(out).toEqual(ANSWER);
    expect(completed).toBe(true);
  });

  it('blocks: only message_start, then content_filter with the upstream usage', async () => {
    const { out, outcomes } = await run(ANSWER, settings(), answering('block', 'too much money'));
    expect(out).toEqual([START, FILTERED]);
    expect(outcomes).toEqual([
      { decision: 'blocked', verdict: 'block', reason: 'too much money', judge: JUDGE },
    ]);
  });

  it('flags: a block verdict with action flag leaves the answer unchanged', async () => {
    const { out, outcomes } = await run(ANSWER, settings({ action: 'flag' }), answering('block'));
    expect(out).toEqual(ANSWER);
    expect(outcomes[0]).toMatchObject({ decision: 'flagged', verdict: 'block' });
  });

  it('skips judging an answer an earlier filter already cut', async () => {
    const judge = answering('block');
    const cut: CanonicalEvent[] = [...TEXT_ONLY.slice(0, -1), FILTERED];
    const { out, outcomes } = await run(cut, settings(), judge);
    expect(judge).not.toHaveBeenCalled();
    expect(out).toEqual(cut);
    expect(outcomes).toEqual([
      { decision: 'pass', verdict: 'skipped', reason: 'already filtered' },
    ]);
  });
});

describe('shadowValidation, scope tool_calls', () => {
  const toolScope = settings({ scope: 'tool_calls' });

  it('streams text live and holds tool calls until the verdict', async () => {
    const source = new Subject<CanonicalEvent>();
    let approve!: () => void;
    const judge = jest.fn<ReturnType<ShadowJudge>, Parameters<ShadowJudge>>(
      () =>
        new Promise((resolve) => {
          approve = () => resolve({ verdict: 'allow', reason: 'ok', judge: JUDGE });
        }),
    );
    const out: CanonicalEvent[] = [];
    source.pipe(shadowValidation(toolScope, judge, () => undefined)).subscribe((e) => out.push(e));
    ANSWER.slice(0, -1).forEach((e) => source.next(e));
    expect(out).toEqual(LIVE);
    source.next(STOP);
    await flush();
    expect(out).toEqual(LIVE);
    expect(judge.mock.calls[0][0]).toEqual({
      text: 'Sending now. Done.',
      toolCalls: [{ name: 'transfer', arguments: '{"amount":5000}' }],
    });
    approve();
    await flush();
    expect(out).toEqual([...LIVE, ...RELEASED_TOOL, STOP]);
  });

  it('blocks: drops the tool calls, keeps the text, ends with content_filter', async () => {
    const { out, outcomes } = await run(ANSWER, toolScope, answering('block', 'unsafe transfer'));
    expect(out).toEqual([...LIVE, FILTERED]);
    expect(outcomes).toEqual([
      { decision: 'blocked', verdict: 'block', reason: 'unsafe transfer', judge: JUDGE },
    ]);
  });

  it('flags: releases the tool calls unchanged', async () => {
    const { out, outcomes } = await run(
      ANSWER,
      { ...toolScope, action: 'flag' },
      answering('block'),
    );
    expect(out).toEqual([...LIVE, ...RELEASED_TOOL, STOP]);
    expect(outcomes[0].decision).toBe('flagged');
  });

  it('skips the judge when the answer has no tool call', async () => {
    const judge = answering('block');
    const { out, outcomes } = await run(TEXT_ONLY, toolScope, judge);
    expect(judge).not.toHaveBeenCalled();
    expect(out).toEqual(TEXT_ONLY);
    expect(outcomes).toEqual([{ decision: 'pass', verdict: 'skipped', reason: 'no tool calls' }]);
  });
});

describe('shadowValidation, judge failures', () => {
  it.each([
    ['a JudgeError', new JudgeError('upstream', "judge call to 'judge-mini' failed: HTTP 502")],
    ['an unparseable verdict', new UnparseableVerdictError(JUDGE)],
    ['any other error', new TypeError('boom')],
  ])('blocks on %s with on_error block', async (_what, error) => {
    const { out, outcomes } = await run(ANSWER, settings(), failing(error));
    expect(out).toEqual([START, FILTERED]);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ decision: 'blocked', verdict: 'error' });
    expect(outcomes[0].error).toMatch(/^[\x20-\x7e]+$/);
  });

  it('passes the answer on a judge error with on_error allow', async () => {
    const error = new JudgeError('upstream', 'failed');
    const { out, outcomes } = await run(ANSWER, settings({ onError: 'allow' }), failing(error));
    expect(out).toEqual(ANSWER);
    expect(outcomes).toEqual([
      { decision: 'pass', verdict: 'error', reason: 'judge error', error: 'failed' },
    ]);
  });

  it('reports the usage of a judge call that gave no verdict', async () => {
    const { outcomes } = await run(ANSWER, settings(), failing(new UnparseableVerdictError(JUDGE)));
    expect(outcomes[0]).toMatchObject({ reason: 'unparseable verdict', judge: JUDGE });
  });

  it('treats a judge that throws synchronously as an error', async () => {
    const judge: ShadowJudge = () => {
      throw new Error('sync');
    };
    const { out, outcomes } = await run(ANSWER, settings({ onError: 'allow' }), judge);
    expect(out).toEqual(ANSWER);
    expect(outcomes[0]).toMatchObject({ decision: 'pass', verdict: 'error' });
  });

  it.each([
    ['block', [START, FILTERED], 'blocked'],
    ['allow', ANSWER, 'pass'],
  ] as const)(
    'times out a judge that never answers (on_error %s) and aborts it',
    async (onError, expected, decision) => {
      const { judge, signals } = hanging();
      const started = Date.now();
      const { out, outcomes } = await run(ANSWER, settings({ timeoutMs: 100, onError }), judge);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(90);
      expect(elapsed).toBeLessThan(1000);
      expect(signals[0].aborted).toBe(true);
      expect(out).toEqual(expected);
      expect(outcomes).toEqual([
        {
          decision,
          verdict: 'error',
          reason: 'judge timeout',
          error: 'the judge did not answer within 100 ms',
        },
      ]);
    },
  );
});

describe('shadowValidation, the stream around the judge', () => {
  it('aborts the judge call when the downstream unsubscribes while it runs', async () => {
    const { judge, signals } = hanging();
    const onOutcome = jest.fn();
    const out: CanonicalEvent[] = [];
    const subscription = from(ANSWER)
      .pipe(shadowValidation(settings(), judge, onOutcome))
      .subscribe((e) => out.push(e));
    await flush();
    expect(signals).toHaveLength(1);
    expect(signals[0].aborted).toBe(false);
    subscription.unsubscribe();
    expect(signals[0].aborted).toBe(true);
    await flush();
    expect(out).toEqual([]);
    expect(onOutcome).not.toHaveBeenCalled();
  });

  it('propagates a source error without judging', async () => {
    const judge = answering('allow');
    const failure = new Error('upstream broke');
    const source = concat(
      from(ANSWER.slice(0, 4)),
      throwError(() => failure),
    );
    const onOutcome = jest.fn();
    await expect(
      lastValueFrom(source.pipe(shadowValidation(settings(), judge, onOutcome))),
    ).rejects.toBe(failure);
    expect(judge).not.toHaveBeenCalled();
    expect(onOutcome).not.toHaveBeenCalled();
  });

  it('drops a held answer whose stream ended without message_stop', async () => {
    const judge = answering('allow');
    const { out, outcomes } = await run(ANSWER.slice(0, -1), settings(), judge);
    expect(out).toEqual([]);
    expect(outcomes).toEqual([]);
    expect(judge).not.toHaveBeenCalled();
  });

  it('never mixes the judge usage into the answer', async () => {
    for (const verdict of ['allow', 'block'] as const) {
      const { out } = await run(ANSWER, settings(), answering(verdict));
      const stop = out[out.length - 1];
      expect(stop).toMatchObject({ type: 'message_stop', usage: USAGE });
    }
  });
});

describe('shadowValidation output through the real encoders (scope tool_calls)', () => {
  const toolScope = settings({ scope: 'tool_calls' });

  /** The SDKs' `fromReadableStream` reads one JSON event per line. */
  function readable(events: unknown[]): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    return new ReadableStream({
      start(controller) {
        for (const e of events) {
          controller.enqueue(encoder.encode(`${JSON.stringify(e)}\n`));
        }
        controller.close();
      },
    });
  }

  async function emitted(verdict: 'allow' | 'block'): Promise<CanonicalEvent[]> {
    return (await run(ANSWER, toolScope, answering(verdict))).out;
  }

  it.each([
    ['allowed', 'allow', 'tool_calls', 1],
    ['blocked', 'block', 'content_filter', 0],
  ] as const)(
    'satisfies ChatCompletionStream when %s',
    async (_what, verdict, finish, toolCalls) => {
      const encoder = new ChatChunkEncoder('public-model', true);
      const chunks = (await emitted(verdict)).flatMap((e) => encoder.encode(e));
      const final = await ChatCompletionStream.fromReadableStream(
        readable(chunks),
      ).finalChatCompletion();
      const choice = final.choices[0];
      expect(choice.message.content).toBe('Sending now. Done.');
      expect(choice.finish_reason).toBe(finish);
      expect(choice.message.tool_calls ?? []).toHaveLength(toolCalls);
      if (toolCalls > 0) {
        expect(choice.message.tool_calls?.[0]).toMatchObject({
          id: 'call_1',
          function: { name: 'transfer', arguments: '{"amount":5000}' },
        });
      }
      expect(final.usage?.prompt_tokens).toBe(USAGE.inputTokens);
    },
  );

  it.each([
    ['allowed', 'allow', 'tool_use', ['thinking', 'text', 'text', 'tool_use']],
    ['blocked', 'block', 'refusal', ['thinking', 'text', 'text']],
  ] as const)('satisfies MessageStream when %s', async (_what, verdict, stop, blocks) => {
    const encoder = new MessagesEventEncoder('public-model');
    const events = (await emitted(verdict)).flatMap((e) => encoder.encode(e));
    const final = await MessageStream.fromReadableStream(readable(events)).finalMessage();
    expect(final.stop_reason).toBe(stop);
    expect(final.content.map((b) => b.type)).toEqual(blocks);
    if (verdict === 'allow') {
      expect(final.content[3]).toMatchObject({ type: 'tool_use', input: { amount: 5000 } });
    }
  });

  it.each([
    ['allowed', 'allow', 'completed', ['reasoning', 'message', 'message', 'function_call']],
    ['blocked', 'block', 'incomplete', ['reasoning', 'message', 'message']],
  ] as const)(
    'satisfies the Responses stream grammar when %s',
    async (_w, verdict, status, items) => {
      let n = 0;
      const encoder = new ResponsesStreamEncoder({
        model: 'public-model',
        request: { model: 'public-model', input: 'send' },
        newId: (prefix) => `${prefix}${++n}`,
        now: () => 1_700_000_100,
      });
      const events = (await emitted(verdict)).flatMap((e) => encoder.encode(e));
      expect(() => checkResponseStream(events)).not.toThrow();
      const final = events[events.length - 1] as any;
      expect(final.response.status).toBe(status);
      expect(final.response.output.map((i: { type: string }) => i.type)).toEqual(items);
      if (verdict === 'block') {
        expect(final.response.incomplete_details).toEqual({ reason: 'content_filter' });
      }
    },
  );

  it.each([
    ['allowed', 'allow', ['reasoning', 'text', 'text', 'tool_call']],
    ['blocked', 'block', ['reasoning', 'text', 'text']],
  ] as const)('adds up to a response without holes when %s', async (_w, verdict, types) => {
    const response = await collectResponse(from(await emitted(verdict)));
    expect(response.content.map((b) => b?.type)).toEqual(types);
    expect(response.usage).toEqual(USAGE);
  });
});
