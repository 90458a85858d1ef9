import { Observable, Subject, lastValueFrom, of, toArray } from 'rxjs';
import type { CanonicalEvent } from '../../../core/canonical';
import { type FilterSettings } from './settings';
import { type LeakReport, systemPromptFilter } from './system-prompt-filter.operator';

const PROMPT =
  'You are Acme Assistant, the support bot of Acme Corporation. Always answer politely and ' +
  'never mention competitors.';
const BLOCK: FilterSettings = { action: 'block', minOverlap: 6 };
const REDACT: FilterSettings = { action: 'redact', minOverlap: 6 };

const start: CanonicalEvent = {
  type: 'message_start',
  id: 'msg_1',
  model: 'm',
  created: 1,
  inputTokens: 12,
};
const stop: CanonicalEvent = {
  type: 'message_stop',
  finishReason: 'stop',
  usage: { inputTokens: 12, outputTokens: 40 },
};

/** A source driven by hand that records whether it was unsubscribed. */
function manualSource(): {
  source: Observable<CanonicalEvent>;
  subject: Subject<CanonicalEvent>;
  tornDown: () => boolean;
} {
  const subject = new Subject<CanonicalEvent>();
  let torn = false;
  const source = new Observable<CanonicalEvent>((subscriber) => {
    const sub = subject.subscribe(subscriber);
    return () => {
      torn = true;
      sub.unsubscribe();
    };
  });
  return { source, subject, tornDown: () => torn };
}

function hooks(): {
  leaks: LeakReport[];
  onLeak: (r: LeakReport) => void;
  countTokens: (t: string) => number;
} {
  const leaks: LeakReport[] = [];
  return { leaks, onLeak: (r) => leaks.push(r), countTokens: (t) => t.length };
}

describe('systemPromptFilter, block mode', () => {
  it('cuts the answer at the leak, closes open blocks and cancels the upstream', () => {
    const { source, subject, tornDown } = manualSource();
    const h = hooks();
    const out: CanonicalEvent[] = [];
    let completed = false;
    source.pipe(systemPromptFilter([PROMPT], BLOCK, h)).subscribe({
      next: (e) => out.push(e),
      complete: () => (completed = true),
    });
    const input: CanonicalEvent[] = [
      start,
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'Let me think about the' },
      { type: 'reasoning_delta', index: 0, text: 'ory.' },
      { type: 'reasoning_signature', index: 0, signature: 'sig' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 't1', name: 'f' } },
      { type: 'tool_arguments_delta', index: 2, json: '{"a":1}' },
      { type: 'text_delta', index: 1, text: 'Hello! You are Acme ' },
      { type: 'text_delta', index: 1, text: 'Assistant, the support bot. More.' },
    ];
    input.forEach((e) => subject.next(e));
    subject.next({ type: 'text_delta', index: 1, text: 'after the cut' });
    subject.next(stop);

    expect(out).toEqual([
      start,
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'Let me think about ' },
      { type: 'reasoning_delta', index: 0, text: 'theory.' },
      { type: 'reasoning_signature', index: 0, signature: 'sig' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 't1', name: 'f' } },
      { type: 'tool_arguments_delta', index: 2, json: '{"a":1}' },
      { type: 'text_delta', index: 1, text: 'Hello! ' },
      { type: 'block_stop', index: 1 },
      { type: 'block_stop', index: 2 },
      {
        type: 'message_stop',
        finishReason: 'content_filter',
        usage: {
          inputTokens: 12,
          outputTokens: (
            'Let me think about the' +
            'ory.' +
            '{"a":1}' +
            'Hello! You are Acme ' +
            'Assistant, the support bot. More.'
          ).length,
        },
      },
    ]);
    expect(completed).toBe(true);
    expect(tornDown()).toBe(true);
    expect(subject.observed).toBe(false);
    expect(h.leaks).toEqual([{ channel: 'text', action: 'block', words: 6 }]);
  });

  it('blocks a leak in tool-call arguments', async () => {
    const h = hooks();
    const events = await lastValueFrom(
      of<CanonicalEvent[]>(
        { ...start, inputTokens: undefined },
        { type: 'block_start', index: 0, block: { kind: 'tool_call', id: 't', name: 'search' } },
        { type: 'tool_arguments_delta', index: 0, json: '{"q":"You\\nare Acme Assis' },
        { type: 'tool_arguments_delta', index: 0, json: 'tant, the support bot"}' },
        { type: 'block_stop', index: 0 },
        stop,
      ).pipe(systemPromptFilter([PROMPT], BLOCK, h), toArray()),
    );
    expect(events.slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'tool_call', id: 't', name: 'search' } },
      { type: 'tool_arguments_delta', index: 0, json: '{"q":"' },
      { type: 'block_stop', index: 0 },
      {
        type: 'message_stop',
        finishReason: 'content_filter',
        usage: {
          inputTokens: 0,
          outputTokens: ('{"q":"You\\nare Acme Assis' + 'tant, the support bot"}').length,
        },
      },
    ]);
    expect(h.leaks).toEqual([{ channel: 'tool_arguments', action: 'block', words: 6 }]);
  });

  it('reports the estimated input tokens when the upstream gave none at the start', async () => {
    const cut = async (first: CanonicalEvent): Promise<CanonicalEvent | undefined> => {
      const events = await lastValueFrom(
        of<CanonicalEvent[]>(
          first,
          { type: 'block_start', index: 0, block: { kind: 'text' } },
          { type: 'text_delta', index: 0, text: 'You are Acme Assistant, the support bot.' },
          { type: 'block_stop', index: 0 },
          stop,
        ).pipe(
          systemPromptFilter([PROMPT], BLOCK, { ...hooks(), inputTokens: () => 77 }),
          toArray(),
        ),
      );
      return events.at(-1);
    };
    expect(await cut({ ...start, inputTokens: undefined })).toMatchObject({
      finishReason: 'content_filter',
      usage: { inputTokens: 77 },
    });
    // What the upstream said wins over the estimate.
    expect(await cut(start)).toMatchObject({ usage: { inputTokens: 12 } });
  });

  it('drops a synchronous source at once', () => {
    let torn = false;
    const source = new Observable<CanonicalEvent>((subscriber) => {
      subscriber.next(start);
      subscriber.next({ type: 'block_start', index: 0, block: { kind: 'text' } });
      subscriber.next({ type: 'text_delta', index: 0, text: PROMPT });
      subscriber.next({ type: 'text_delta', index: 0, text: 'more' });
      subscriber.next(stop);
      return () => (torn = true);
    });
    const out: CanonicalEvent[] = [];
    source.pipe(systemPromptFilter([PROMPT], BLOCK, hooks())).subscribe((e) => out.push(e));
    expect(out.map((e) => e.type)).toEqual([
      'message_start',
      'block_start',
      'block_stop',
      'message_stop',
    ]);
    expect(torn).toBe(true);
  });

  it('catches a leak completed by the end of a block', () => {
    const h = hooks();
    const out: CanonicalEvent[] = [];
    of<CanonicalEvent[]>(
      start,
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'ok: you are acme assistant the support' },
      { type: 'block_stop', index: 0 },
      stop,
    )
      .pipe(systemPromptFilter([PROMPT], BLOCK, h))
      .subscribe((e) => out.push(e));
    expect(out.slice(2)).toEqual([
      { type: 'text_delta', index: 0, text: 'ok: ' },
      { type: 'block_stop', index: 0 },
      expect.objectContaining({ type: 'message_stop', finishReason: 'content_filter' }),
    ]);
    expect(h.leaks).toHaveLength(1);
  });
});

describe('systemPromptFilter, redact mode', () => {
  it('redacts each leak, keeps the stream going and the upstream stop as it was', async () => {
    const h = hooks();
    const events = await lastValueFrom(
      of<CanonicalEvent[]>(
        start,
        { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
        { type: 'reasoning_delta', index: 0, text: 'They said: always answer politely and never ' },
        { type: 'reasoning_delta', index: 0, text: 'mention competitors. OK' },
        { type: 'reasoning_signature', index: 0, signature: 'sig' },
        { type: 'block_stop', index: 0 },
        { type: 'block_start', index: 1, block: { kind: 'text' } },
        { type: 'text_delta', index: 1, text: 'Hi! You are Acme Assistant, the support bot' },
        { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 't', name: 'f' } },
        {
          type: 'tool_arguments_delta',
          index: 2,
          json: '{"q":"of Acme Corporation. Always answer',
        },
        { type: 'tool_arguments_delta', index: 2, json: ' politely!","n":2}' },
        { type: 'block_stop', index: 2 },
        { type: 'text_delta', index: 1, text: '. Bye' },
        { type: 'block_stop', index: 1 },
        stop,
      ).pipe(systemPromptFilter([PROMPT], REDACT, h), toArray()),
    );
    expect(events).toEqual([
      start,
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'They said: ' },
      { type: 'reasoning_delta', index: 0, text: '[REDACTED]. OK' },
      { type: 'reasoning_signature', index: 0, signature: 'sig' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'Hi! ' },
      { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 't', name: 'f' } },
      { type: 'tool_arguments_delta', index: 2, json: '{"q":"' },
      { type: 'tool_arguments_delta', index: 2, json: '[REDACTED]!","n":2}' },
      { type: 'block_stop', index: 2 },
      { type: 'text_delta', index: 1, text: '[REDACTED]. Bye' },
      { type: 'block_stop', index: 1 },
      stop,
    ]);
    expect(h.leaks).toEqual([
      { channel: 'reasoning', action: 'redact', words: 7 },
      { channel: 'tool_arguments', action: 'redact', words: 6 },
      { channel: 'text', action: 'redact', words: 7 },
    ]);
  });

  it('releases held text before a message_stop that skipped block_stop', async () => {
    const events = await lastValueFrom(
      of<CanonicalEvent[]>(
        start,
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'It is the' },
        stop,
      ).pipe(systemPromptFilter([PROMPT], REDACT, hooks()), toArray()),
    );
    expect(events.slice(2)).toEqual([
      { type: 'text_delta', index: 0, text: 'It is ' },
      { type: 'text_delta', index: 0, text: 'the' },
      stop,
    ]);
  });
});

describe('systemPromptFilter, passing through', () => {
  const text = 'Héllo 👋🏽 wörld\r\nnaïve café — «ok» 𝔘\r\n';
  const events: CanonicalEvent[] = [
    start,
    { type: 'block_start', index: 0, block: { kind: 'text' } },
    ...text.split('').map((t): CanonicalEvent => ({ type: 'text_delta', index: 0, text: t })),
    { type: 'block_stop', index: 0 },
    stop,
  ];

  it('leaves unprotected text byte for byte', async () => {
    const out = await lastValueFrom(
      of(...events).pipe(systemPromptFilter([PROMPT], BLOCK, hooks()), toArray()),
    );
    const texts = out.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));
    expect(texts.join('')).toBe(text);
    expect(texts).not.toContain('');
    expect(out.filter((e) => e.type !== 'text_delta')).toEqual([
      start,
      events[1],
      { type: 'block_stop', index: 0 },
      stop,
    ]);
  });

  it('is a no-op without secrets', async () => {
    const out = await lastValueFrom(
      of(...events).pipe(systemPromptFilter([' '], BLOCK, hooks()), toArray()),
    );
    expect(out).toEqual(events);
  });

  it('propagates errors and a source that ends without message_stop', async () => {
    const failing = new Observable<CanonicalEvent>((s) => {
      s.next(start);
      s.error(new Error('upstream broke'));
    });
    await expect(
      lastValueFrom(failing.pipe(systemPromptFilter([PROMPT], BLOCK, hooks()))),
    ).rejects.toThrow('upstream broke');
    const truncated = await lastValueFrom(
      of<CanonicalEvent[]>(
        start,
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'It is the' },
      ).pipe(systemPromptFilter([PROMPT], BLOCK, hooks()), toArray()),
    );
    expect(truncated.slice(2)).toEqual([
      { type: 'text_delta', index: 0, text: 'It is ' },
      { type: 'text_delta', index: 0, text: 'the' },
    ]);
  });
});
