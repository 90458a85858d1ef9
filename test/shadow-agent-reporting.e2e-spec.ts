import OpenAI from 'openai';
import { rejection } from './support/rejection';
import {
  HEADER,
  JUDGE_500,
  JUDGE_COST,
  JUDGE_PATH,
  SHADOW,
  USAGE_HEADER,
  allow,
  answers,
  block,
  chat,
  deferred,
  gw,
  health,
  judge,
  judgeRequests,
  messages,
  openai,
  rawPost,
  sleep,
  until,
  useShadowAgentGateway,
} from './support/shadow-agent-kit';

/** shadow_agent_validation: its verdict, usage and health reporting. */
useShadowAgentGateway();

describe('shadow_agent_validation reporting', () => {
  it('writes the judge usage to the access log apart from the client usage', async () => {
    const { headers } = await chat.create(chat.body({}, false));
    const requestId = headers.get('x-request-id');
    const line = await until(() =>
      gw.logs.find((l) => l.msg === 'request' && l.requestId === requestId),
    );
    expect(line.protections).toBe(`${SHADOW}=pass`);
    expect(line.protectionUsage).toEqual([
      {
        protection: SHADOW,
        model: 'judge-mini',
        inputTokens: 1000,
        outputTokens: 20,
        costUsd: JUDGE_COST,
      },
    ]);
    expect(line.usage).toMatchObject({ inputTokens: 40, outputTokens: 12 });
  });

  it('writes the final verdict of a stream to the access log', async () => {
    judge.on(JUDGE_PATH, () => block('promises a specific rate'));
    const res = await rawPost(gw.origin, messages.path, messages.body({}, true));
    const requestId = res.headers['x-request-id'];
    const line = await until(() =>
      gw.logs.find((l) => l.msg === 'request' && l.requestId === requestId),
    );
    expect(line.stream).toBe(true);
    // The judge's reason may quote the prompt: the log keeps the verdict, not the text.
    expect(line.protections).toBe(`${SHADOW}=blocked`);
    expect(JSON.stringify(line)).not.toContain('promises a specific rate');
    expect(line.protectionUsage).toEqual([
      expect.objectContaining({ protection: SHADOW, inputTokens: 1000, costUsd: JUDGE_COST }),
    ]);
    expect(line.usage).toMatchObject({ inputTokens: 28, outputTokens: 30 });
  });

  it.each([false, true])(
    'cancels the judge call when the client goes away (stream: %s)',
    async (stream) => {
      const judging = deferred();
      judge.on(JUDGE_PATH, async (req) => {
        judging.resolve();
        await Promise.race([sleep(5000), req.ended]);
        return allow();
      });
      const before = (await health())[SHADOW];
      const controller = new AbortController();
      const done = (async () => {
        const result: any = await openai.chat.completions.create(
          chat.body({ settings: { timeout_ms: 8000 } }, stream),
          { signal: controller.signal },
        );
        if (stream) {
          for await (const _chunk of result) {
            // nothing arrives: the answer is held until the verdict
          }
        }
      })().catch(() => undefined);
      await judging.promise;
      controller.abort();
      await done;
      const ended = await Promise.race([
        judgeRequests()[0].ended,
        sleep(1000).then(() => 'still running'),
      ]);
      expect(ended).toBe('aborted');
      // A client that left is no judge failure.
      const after = (await health())[SHADOW];
      expect(after.errors).toBe(before.errors);
      expect(after.blocked).toBe(before.blocked);
    },
  );

  it('counts passes, flags, blocks and judge errors at GET /health/protections', async () => {
    const before = (await health())[SHADOW];
    await chat.create(chat.body({}, false));
    judge.on(JUDGE_PATH, () => block('no'));
    await chat.create(chat.body({}, false));
    await chat.create(chat.body({ settings: { action: 'flag' } }, false));
    judge.on(JUDGE_PATH, () => JUDGE_500);
    await chat.create(chat.body({ settings: { on_error: 'block' } }, false));
    const after = (await health())[SHADOW];
    expect(after.pass - before.pass).toBe(1);
    expect(after.flagged - before.flagged).toBe(1);
    expect(after.blocked - before.blocked).toBe(2);
    expect(after.errors - before.errors).toBe(1);
  });

  it('leaves requests without the tool alone: no judge call, no header', async () => {
    const { headers } = await chat.create(chat.body({ noProtection: true }, false));
    expect(headers.get(HEADER)).toBeNull();
    expect(headers.get(USAGE_HEADER)).toBeNull();
    expect(judgeRequests()).toHaveLength(0);
  });

  it('rejects a tool_choice naming the protection', async () => {
    const err = await rejection(
      openai.chat.completions.create({
        ...chat.body({}, false),
        tool_choice: { type: 'function', function: { name: SHADOW } },
      }),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('tool_choice');
    expect(answers.requests).toHaveLength(0);
  });

  it.each([false, true])(
    'answers an upstream failure with its error status, the verdict "error", and no judge call (stream: %p)',
    async (stream) => {
      answers.on(chat.upstreamPath, () => ({
        status: 500,
        json: { error: { message: 'upstream exploded', type: 'server_error' } },
      }));
      const err = await rejection(openai.chat.completions.create(chat.body({}, stream)));
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err.status).toBe(502);
      expect(err.headers.get(HEADER)).toBe(`${SHADOW}=error`);
      expect(err.headers.get('trailer')).toBeNull();
      expect(judgeRequests()).toHaveLength(0);
    },
  );

  it('serves a Messages client on an OpenAI model (translated), judged the same way', async () => {
    judge.on(JUDGE_PATH, () => block('promises a specific rate'));
    const { answer, headers } = await messages.create({
      ...messages.body({}, false),
      model: 'gpt-answer',
    });
    expect(answers.last().path).toBe('/v1/chat/completions');
    expect(answer).toMatchObject({ text: '', finish: 'refusal' });
    expect(headers.get(HEADER)).toBe(`${SHADOW}=blocked;reason="promises a specific rate"`);
  });
});

// ---------------------------------------------------------------------------------------
