import {
  checkResponseStream,
  responsesStream,
  type UpstreamItem,
} from '../../../test/support/responses-fixtures';
import { UpstreamConnectionError, UpstreamHttpError } from '../../common/errors/gateway-errors';
import type { SseFrame } from '../../common/sse/sse-writer';
import type { CanonicalUsage } from '../../core/canonical';
import { ResponsesRelay } from './responses.passthrough';
import { type ResponseObject, responseShell } from './responses.wire';

const ITEMS: UpstreamItem[] = [
  { kind: 'reasoning', summaries: ['**Plan**\n\nLook it up.'] },
  { kind: 'message', pieces: ['Hel', 'lo'] },
];

function frames(events: object[]): SseFrame[] {
  return events.map((e) => ({
    event: (e as { type: string }).type,
    data: JSON.stringify(e),
  }));
}

function relayWith(model: string | undefined) {
  const usage: CanonicalUsage[] = [];
  const relay = new ResponsesRelay(
    model,
    (): ResponseObject =>
      responseShell({ instructions: 'x' }, model ?? '', 'resp_fallback', 1_700_000_000),
    (u) => usage.push(u),
  );
  return { relay, usage };
}

const parse = (out: SseFrame[]) => out.map((f) => JSON.parse(f.data) as Record<string, any>);

describe('ResponsesRelay', () => {
  it('relays every event in order with its name and bytes, rewriting only the snapshot model', () => {
    const upstream = frames(responsesStream('upstream-gpt-2025', ITEMS));
    const { relay, usage } = relayWith('public-gpt');
    const out = upstream.flatMap((f) => relay.relay(f));
    expect(out.map((f) => f.event)).toEqual(upstream.map((f) => f.event));
    out.forEach((f, i) => {
      const lifecycle = f.event!.startsWith('response.') && 'response' in JSON.parse(f.data);
      if (lifecycle) {
        expect(f.data).toBe(
          upstream[i].data.replace('"model":"upstream-gpt-2025"', '"model":"public-gpt"'),
        );
      } else {
        expect(f.data).toBe(upstream[i].data);
      }
    });
    expect(out.map((f) => f.data).join('')).not.toContain('upstream-gpt-2025');
    expect(relay.end()).toEqual([]);
    expect(usage).toEqual([
      { inputTokens: 84, outputTokens: 94, cachedInputTokens: 16, reasoningTokens: 64 },
    ]);
  });

  it('rewrites the model key only, not a tool that names the same model string elsewhere', () => {
    const [created] = responsesStream('gpt-5', []);
    created.response.tools = [{ type: 'image_generation', model: 'gpt-image-1' }];
    created.response.instructions = 'Say "model":"gpt-5" literally.';
    const { relay } = relayWith('public-gpt');
    const [out] = relay.relay({ event: 'response.created', data: JSON.stringify(created) });
    const parsed = JSON.parse(out.data);
    expect(parsed.response.model).toBe('public-gpt');
    expect(parsed.response.tools[0].model).toBe('gpt-image-1');
    expect(parsed.response.instructions).toBe('Say "model":"gpt-5" literally.');
  });

  it('relays the upstream model untouched when no catalog id is given', () => {
    const { relay } = relayWith(undefined);
    const upstream = frames(responsesStream('upstream-gpt-2025', ITEMS));
    const out = upstream.flatMap((f) => relay.relay(f));
    expect(out.map((f) => f.data)).toEqual(upstream.map((f) => f.data));
  });

  it('drops a [DONE] line and names events of a server that sends no event lines', () => {
    const { relay } = relayWith('public-gpt');
    const [created] = responsesStream('m', []);
    expect(relay.relay({ data: JSON.stringify(created) })).toEqual([
      { event: 'response.created', data: expect.stringContaining('"model":"public-gpt"') },
    ]);
    expect(relay.relay({ data: '[DONE]' })).toEqual([]);
    expect(relay.relay({ data: 'not json' })).toEqual([{ event: 'message', data: 'not json' }]);
  });

  it('finishes a broken stream with error and response.failed, continuing the sequence', () => {
    const upstream = frames(responsesStream('upstream-gpt-2025', ITEMS)).slice(0, 9);
    const { relay, usage } = relayWith('public-gpt');
    const out = upstream.flatMap((f) => relay.relay(f));
    const tail = parse(relay.fail(new UpstreamConnectionError('The upstream broke (ECONNRESET).')));
    expect(tail).toEqual([
      {
        type: 'error',
        sequence_number: 9,
        code: 'upstream_unavailable',
        message: 'The upstream broke (ECONNRESET).',
        param: null,
        error: {
          type: 'server_error',
          code: 'upstream_unavailable',
          message: 'The upstream broke (ECONNRESET).',
          param: null,
        },
      },
      {
        type: 'response.failed',
        sequence_number: 10,
        response: expect.objectContaining({
          id: 'resp_up_1',
          model: 'public-gpt',
          status: 'failed',
          error: { code: 'server_error', message: 'The upstream broke (ECONNRESET).' },
          output: [],
          usage: null,
        }),
      },
    ]);
    expect(() => checkResponseStream([...parse(out), ...tail])).not.toThrow();
    expect(usage).toEqual([]);
    expect(relay.end()).toEqual([]);
  });

  it('reports a rate limit as rate_limit_exceeded in the failed snapshot', () => {
    const { relay } = relayWith('public-gpt');
    relay.relay(frames(responsesStream('m', []))[0]);
    const [, failed] = parse(
      relay.fail(
        new UpstreamHttpError(429, 'rate_limit', 'Slow down', { code: 'rate_limit_exceeded' }),
      ),
    );
    expect(failed.response.error).toEqual({ code: 'rate_limit_exceeded', message: 'Slow down' });
  });

  it('fails a stream that ended without a terminal event', () => {
    const upstream = frames(responsesStream('m', ITEMS, 'none'));
    const { relay } = relayWith('public-gpt');
    const out = parse(upstream.flatMap((f) => relay.relay(f)));
    const tail = parse(relay.end());
    expect(tail.map((e) => e.type)).toEqual(['error', 'response.failed']);
    expect(tail[0].message).toMatch(/ended before the response completed/);
    expect(() => checkResponseStream([...out, ...tail])).not.toThrow();
  });

  it('adds only response.failed after an upstream error event', () => {
    const { relay } = relayWith('public-gpt');
    const [created] = responsesStream('m', []);
    const error = {
      type: 'error',
      sequence_number: 1,
      error: { type: 'server_error', code: 'server_error', message: 'boom', param: null },
    };
    relay.relay({ event: 'response.created', data: JSON.stringify(created) });
    relay.relay({ event: 'error', data: JSON.stringify(error) });
    expect(parse(relay.end())).toEqual([
      expect.objectContaining({ type: 'response.failed', sequence_number: 2 }),
    ]);
  });

  it('opens the response itself when the upstream failed before sending anything', () => {
    const { relay } = relayWith('public-gpt');
    const out = parse(relay.fail(new UpstreamConnectionError('down')));
    expect(out.map((e) => [e.type, e.sequence_number])).toEqual([
      ['response.created', 0],
      ['error', 1],
      ['response.failed', 2],
    ]);
    expect(out[2].response).toMatchObject({ id: 'resp_fallback', model: 'public-gpt' });
    expect(() => checkResponseStream(out)).not.toThrow();
  });

  it('sends nothing more after the terminal event, even if the connection then breaks', () => {
    const { relay } = relayWith('public-gpt');
    frames(responsesStream('m', ITEMS)).forEach((f) => relay.relay(f));
    expect(relay.fail(new UpstreamConnectionError('late reset'))).toEqual([]);
  });
});
