import { checkResponseStream } from './support/responses-fixtures';
import { parseSse } from './support/sse';
import { rejection } from './support/rejection';
import {
  ANSWER_TEXT,
  EARLIER_TURN,
  FORMATS,
  HEADER,
  JUDGE_500,
  JUDGE_PATH,
  LAST_TURN,
  POLICY,
  RATE_TOOL_DESCRIPTION,
  SHADOW,
  SHADOW_USAGE,
  SYSTEM,
  TOOL_ANSWER,
  USAGE_HEADER,
  allow,
  answerWith,
  answers,
  block,
  captured,
  count,
  deferred,
  gw,
  judge,
  judgeAfter,
  judgeInput,
  judgeReply,
  judgeRequests,
  rawPost,
  responses,
  section,
  sleep,
  useShadowAgentGateway,
} from './support/shadow-agent-kit';

/** shadow_agent_validation on each format: whole answers, streams and settings. */
useShadowAgentGateway();

describe.each(FORMATS)('shadow_agent_validation on $path', (format) => {
  describe('without streaming', () => {
    it('returns the answer unchanged when the judge allows it, with the client usage the upstream reported', async () => {
      const { answer, headers } = await format.create(format.body({}, false));
      expect(answer).toEqual({
        text: ANSWER_TEXT,
        toolCalls: [],
        finish: format.finish.text,
        usage: format.usage,
      });
      expect(headers.get(HEADER)).toBe(`${SHADOW}=pass`);
      expect(headers.get(USAGE_HEADER)).toBe(SHADOW_USAGE);
      expect(judgeRequests()).toHaveLength(1);
    });

    it('replaces a blocked answer with a content-filter ending and says why in the header', async () => {
      judge.on(JUDGE_PATH, () => block('promises a specific rate'));
      const { answer, headers } = await format.create(format.body({}, false));
      expect(answer.text).toBe('');
      expect(answer.toolCalls).toEqual([]);
      expect(answer.finish).toBe(format.finish.blocked);
      expect(answer.usage).toEqual(format.usage);
      expect(headers.get(HEADER)).toBe(`${SHADOW}=blocked;reason="promises a specific rate"`);
      expect(headers.get(USAGE_HEADER)).toBe(SHADOW_USAGE);
    });

    it('drops blocked tool calls too (scope answer)', async () => {
      answerWith(TOOL_ANSWER);
      judge.on(JUDGE_PATH, () => block('unauthorized lookup'));
      const { answer } = await format.create(format.body({ clientTool: true }, false));
      expect(answer).toMatchObject({ text: '', toolCalls: [], finish: format.finish.blocked });
    });

    it('delivers a flagged answer unchanged and marks it in the header', async () => {
      judge.on(JUDGE_PATH, () => block('promises a specific rate'));
      const { answer, headers } = await format.create(
        format.body({ settings: { action: 'flag' } }, false),
      );
      expect(answer).toEqual({
        text: ANSWER_TEXT,
        toolCalls: [],
        finish: format.finish.text,
        usage: format.usage,
      });
      expect(headers.get(HEADER)).toBe(`${SHADOW}=flagged;reason="promises a specific rate"`);
    });

    it('sends the judge the system prompt, the last user turn, the policy and the candidate, and no client tools', async () => {
      await format.create(format.body({ clientTool: true }, false));
      const [request] = judgeRequests();
      expect(request.body.model).toBe('judge-mini');
      expect(request.body.stream).not.toBe(true);
      expect(request.body.tools).toBeUndefined();
      expect(request.raw).not.toContain('get_rate');
      expect(request.raw).not.toContain(RATE_TOOL_DESCRIPTION);
      expect(request.raw).not.toContain(SHADOW);
      const { system, user } = judgeInput(request);
      expect(system).toContain('shadow agent');
      expect(system).toContain('Review the whole candidate output');
      expect(section(user, 'POLICY')).toBe(POLICY);
      expect(section(user, 'SYSTEM_PROMPT')).toBe(SYSTEM);
      expect(section(user, 'LAST_USER_TURN')).toBe(LAST_TURN);
      expect(section(user, 'CANDIDATE_TEXT')).toBe(ANSWER_TEXT);
      expect(section(user, 'CANDIDATE_TOOL_CALLS')).toBe('(no tool calls)');
      expect(user).not.toContain(EARLIER_TURN);
    });

    it('puts the candidate tool calls before the judge', async () => {
      answerWith(TOOL_ANSWER);
      const { answer } = await format.create(format.body({ clientTool: true }, false));
      expect(answer).toMatchObject({ toolCalls: ['get_rate'], finish: format.finish.tools });
      const { user } = judgeInput(judgeRequests()[0]);
      expect(section(user, 'CANDIDATE_TOOL_CALLS')).toBe(
        'Tool call 1: get_rate\nArguments: {"account":"savings"}',
      );
      expect(section(user, 'CANDIDATE_TEXT')).toBe('Let me look that up.');
    });

    it('strips the protection tool from the upstream request and keeps the client tool and tool_choice', async () => {
      await format.create(format.body({ clientTool: true }, false));
      const sent = answers.last();
      expect(sent.path).toBe(format.upstreamPath);
      expect(sent.raw).not.toContain(SHADOW);
      expect(sent.raw).not.toContain(POLICY);
      const { names, choice } = format.upstreamTools(sent.body);
      expect(names).toEqual(['get_rate']);
      expect(JSON.stringify(choice)).toContain('get_rate');
    });

    it('drops tools and tool_choice upstream when the protection was the only tool', async () => {
      await format.create(format.body({}, false));
      expect(answers.last().body.tools).toBeUndefined();
      expect(answers.last().body.tool_choice).toBeUndefined();
    });

    it.each([
      ['a 500', 'block', () => JUDGE_500, false],
      ['a 500', 'allow', () => JUDGE_500, false],
      ['garbage', 'block', () => judgeReply('I would rather not say.'), true],
      ['garbage', 'allow', () => judgeReply('I would rather not say.'), true],
    ] as const)(
      'on a judge answering %s, on_error %s decides',
      async (_what, onError, reply, judgeAnswered) => {
        judge.on(JUDGE_PATH, reply);
        const { answer, headers } = await format.create(
          format.body({ settings: { on_error: onError } }, false),
        );
        if (onError === 'block') {
          expect(answer).toMatchObject({ text: '', finish: format.finish.blocked });
          expect(headers.get(HEADER)).toMatch(new RegExp(`^${SHADOW}=blocked;error="[^"]+"$`));
        } else {
          expect(answer).toMatchObject({ text: ANSWER_TEXT, finish: format.finish.text });
          expect(headers.get(HEADER)).toMatch(new RegExp(`^${SHADOW}=pass;error="[^"]+"$`));
        }
        expect(answer.usage).toEqual(format.usage);
        // A judge that answered, even without a verdict, still cost something.
        expect(headers.get(USAGE_HEADER)).toBe(judgeAnswered ? SHADOW_USAGE : null);
      },
    );

    it.each(['block', 'allow'] as const)(
      'gives up on a slow judge after timeout_ms (on_error %s)',
      async (onError) => {
        judge.on(JUDGE_PATH, judgeAfter(5000, allow()));
        const started = Date.now();
        const { answer, headers } = await format.create(
          format.body({ settings: { on_error: onError, timeout_ms: 300 } }, false),
        );
        const elapsed = Date.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(280);
        expect(elapsed).toBeLessThan(1500);
        expect(headers.get(HEADER)).toMatch(
          new RegExp(`^${SHADOW}=${onError === 'block' ? 'blocked' : 'pass'};error="[^"]*300 ms"$`),
        );
        expect(answer.finish).toBe(
          onError === 'block' ? format.finish.blocked : format.finish.text,
        );
        // The judge call is cancelled, not left running.
        await expect(judgeRequests()[0].ended).resolves.toBe('aborted');
      },
    );

    it('with scope tool_calls, judges nothing when the answer has no tool call', async () => {
      const { answer, headers } = await format.create(
        format.body({ settings: { scope: 'tool_calls' } }, false),
      );
      expect(answer.text).toBe(ANSWER_TEXT);
      expect(headers.get(HEADER)).toBe(`${SHADOW}=pass`);
      expect(headers.get(USAGE_HEADER)).toBeNull();
      expect(judgeRequests()).toHaveLength(0);
    });

    it('with scope tool_calls, keeps the text and drops blocked tool calls', async () => {
      answerWith(TOOL_ANSWER);
      judge.on(JUDGE_PATH, () => block('no lookups today'));
      const { answer, headers } = await format.create(
        format.body({ clientTool: true, settings: { scope: 'tool_calls' } }, false),
      );
      expect(answer).toEqual({
        text: 'Let me look that up.',
        toolCalls: [],
        finish: format.finish.blocked,
        usage: format.usage,
      });
      expect(headers.get(HEADER)).toBe(`${SHADOW}=blocked;reason="no lookups today"`);
      expect(judgeInput(judgeRequests()[0]).system).toContain('Review only CANDIDATE_TOOL_CALLS');
    });
  });

  describe('streaming', () => {
    it('streams an allowed answer unchanged, with the upstream usage; the header says pending', async () => {
      const answer = await format.stream(format.body({}, true), () => undefined);
      expect(answer).toEqual({
        text: ANSWER_TEXT,
        toolCalls: [],
        finish: format.finish.text,
        usage: format.usage,
      });
      expect(captured!.headers.get(HEADER)).toBe(`${SHADOW}=pending`);
      const raw = await captured!.body;
      expect(raw).toContain(`: ${HEADER}: ${SHADOW}=pass\n`);
      expect(raw).toContain(`: ${USAGE_HEADER}: ${SHADOW_USAGE}\n`);
      if (format === responses) {
        checkResponseStream(parseSse(raw).map((e) => e.data));
      }
    });

    it('ends a blocked answer with a well-formed content-filter ending', async () => {
      judge.on(JUDGE_PATH, () => block('promises a specific rate'));
      const answer = await format.stream(format.body({}, true), () => undefined);
      expect(answer).toEqual({
        text: '',
        toolCalls: [],
        finish: format.finish.blocked,
        usage: format.usage,
      });
      const raw = await captured!.body;
      expect(raw).toContain(`: ${HEADER}: ${SHADOW}=blocked;reason="promises a specific rate"\n`);
      expect(raw).not.toContain('savings rate');
      if (format === responses) {
        checkResponseStream(parseSse(raw).map((e) => e.data));
      }
    });

    it('sends the final verdict and the judge usage as HTTP trailers', async () => {
      judge.on(JUDGE_PATH, () => block('promises a specific rate'));
      const res = await rawPost(gw.origin, format.path, format.body({}, true));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('text/event-stream');
      expect(res.headers[HEADER]).toBe(`${SHADOW}=pending`);
      expect(res.headers.trailer).toContain(HEADER);
      expect(res.trailers[HEADER]).toBe(`${SHADOW}=blocked;reason="promises a specific rate"`);
      expect(res.trailers[USAGE_HEADER]).toBe(SHADOW_USAGE);
      expect(format.rawText(res.body)).toBe('');
    });

    it('delivers a flagged stream unchanged, with flagged in the trailer', async () => {
      judge.on(JUDGE_PATH, () => block('promises a specific rate'));
      const res = await rawPost(
        gw.origin,
        format.path,
        format.body({ settings: { action: 'flag' } }, true),
      );
      expect(format.rawText(res.body)).toBe(ANSWER_TEXT);
      expect(res.trailers[HEADER]).toBe(`${SHADOW}=flagged;reason="promises a specific rate"`);
    });

    it('holds the whole answer (scope answer) until the verdict, sending keep-alives meanwhile', async () => {
      const release = deferred();
      let releasedByClient = false;
      let dataBeforeVerdict: boolean | undefined;
      judge.on(JUDGE_PATH, async () => {
        await Promise.race([release.promise, sleep(3000)]);
        return allow();
      });
      const res = await rawPost(gw.origin, format.path, format.body({}, true), (soFar) => {
        if (!releasedByClient && count(soFar, ': keepalive') >= 2) {
          releasedByClient = true;
          dataBeforeVerdict = /^(data|event):/m.test(soFar);
          release.resolve();
        }
      });
      expect(releasedByClient).toBe(true);
      expect(dataBeforeVerdict).toBe(false);
      expect(format.rawText(res.body)).toBe(ANSWER_TEXT);
      expect(res.trailers[HEADER]).toBe(`${SHADOW}=pass`);
      expect(res.trailers[USAGE_HEADER]).toBe(SHADOW_USAGE);
    });

    it('with on_error block, ends the stream at timeout_ms with a content-filter ending', async () => {
      judge.on(JUDGE_PATH, judgeAfter(5000, allow()));
      const started = Date.now();
      const answer = await format.stream(
        format.body({ settings: { timeout_ms: 300 } }, true),
        () => undefined,
      );
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(280);
      expect(elapsed).toBeLessThan(1500);
      expect(answer).toMatchObject({ text: '', finish: format.finish.blocked });
      expect(await captured!.body).toMatch(
        new RegExp(`: ${HEADER}: ${SHADOW}=blocked;error="[^"]*300 ms"\\n`),
      );
      await expect(judgeRequests()[0].ended).resolves.toBe('aborted');
    });

    it('with on_error allow, streams the answer when the judge fails', async () => {
      judge.on(JUDGE_PATH, () => JUDGE_500);
      const answer = await format.stream(
        format.body({ settings: { on_error: 'allow' } }, true),
        () => undefined,
      );
      expect(answer).toMatchObject({ text: ANSWER_TEXT, finish: format.finish.text });
      expect(await captured!.body).toMatch(new RegExp(`: ${HEADER}: ${SHADOW}=pass;error="`));
    });

    it('with scope tool_calls, streams the text live and releases the tool calls on allow', async () => {
      answerWith(TOOL_ANSWER);
      const order: string[] = [];
      const textSeen = deferred();
      judge.on(JUDGE_PATH, async () => {
        // Answers only once the client has seen text (or, if text were held, much later).
        await Promise.race([textSeen.promise, sleep(2000)]);
        order.push('judge answers');
        return allow();
      });
      const answer = await format.stream(
        format.body(
          { clientTool: true, settings: { scope: 'tool_calls', timeout_ms: 5000 } },
          true,
        ),
        (kind) => {
          if (order[order.length - 1] !== kind) {
            order.push(kind);
          }
          if (kind === 'text') {
            textSeen.resolve();
          }
        },
      );
      expect(order).toEqual(['text', 'judge answers', 'tool']);
      expect(answer).toEqual({
        text: 'Let me look that up.',
        toolCalls: ['get_rate'],
        finish: format.finish.tools,
        usage: format.usage,
      });
      const raw = await captured!.body;
      expect(raw).toContain(`: ${HEADER}: ${SHADOW}=pass\n`);
      if (format === responses) {
        checkResponseStream(parseSse(raw).map((e) => e.data));
      }
    });

    it('with scope tool_calls, drops blocked tool calls and ends with a content filter', async () => {
      answerWith(TOOL_ANSWER);
      judge.on(JUDGE_PATH, () => block('no lookups today'));
      const kinds: string[] = [];
      const answer = await format.stream(
        format.body({ clientTool: true, settings: { scope: 'tool_calls' } }, true),
        (kind) => kinds.push(kind),
      );
      expect(kinds).not.toContain('tool');
      expect(answer).toEqual({
        text: 'Let me look that up.',
        toolCalls: [],
        finish: format.finish.blocked,
        usage: format.usage,
      });
      const raw = await captured!.body;
      expect(raw).toContain(`: ${HEADER}: ${SHADOW}=blocked;reason="no lookups today"\n`);
      expect(raw).not.toContain('savings');
      if (format === responses) {
        checkResponseStream(parseSse(raw).map((e) => e.data));
      }
    });
  });

  describe('settings', () => {
    it.each([
      ['an unknown setting', { threshold: 0.5 }, 'threshold'],
      ['a bad scope', { scope: 'everything' }, 'scope'],
      ['a bad action', { action: 'drop' }, 'action'],
      ['a bad on_error', { on_error: 'ignore' }, 'on_error'],
      ['timeout_ms below the range', { timeout_ms: 50 }, 'timeout_ms'],
      ['timeout_ms above the range', { timeout_ms: 120_001 }, 'timeout_ms'],
      ['an unknown model', { model: 'no-such-model' }, 'model'],
    ])('rejects %s with a 400 naming it, before any call', async (_what, settings, key) => {
      const err = await rejection(
        format.create(format.body({ settings, asConst: true, extraTools: [] }, false)),
      );
      format.expectSettingsError(err, format.param(0, key));
      expect(answers.requests).toHaveLength(0);
      expect(judgeRequests()).toHaveLength(0);
    });

    it('rejects a streaming request with a bad setting before the stream starts', async () => {
      const res = await rawPost(
        gw.origin,
        format.path,
        format.body({ settings: { scope: 'everything' } }, true),
      );
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.body).toContain(format.param(0, 'scope'));
      expect(answers.requests).toHaveLength(0);
    });

    it('rejects a request without a judge model (none set, no SHADOW_AGENT_MODEL)', async () => {
      const err = await rejection(
        format.create(format.body({ settings: { model: undefined } }, false)),
      );
      expect(err.status).toBe(400);
      expect(JSON.stringify(err.error)).toContain('needs a judge model');
      expect(answers.requests).toHaveLength(0);
    });

    it('reads settings from const as well as default', async () => {
      judge.on(JUDGE_PATH, () => block('off policy'));
      const { answer, headers } = await format.create(
        format.body({ settings: { action: 'flag' }, asConst: true }, false),
      );
      expect(answer.text).toBe(ANSWER_TEXT);
      expect(headers.get(HEADER)).toBe(`${SHADOW}=flagged;reason="off policy"`);
    });
  });
});
