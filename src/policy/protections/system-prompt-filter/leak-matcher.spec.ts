import type { FilterAction } from './settings';
import { compileSecrets, LeakMatcher, type LeakChannelKind } from './leak-matcher';
import { takeSecrets } from './secrets';

const PROMPT =
  'You are Acme Assistant, the support bot of Acme Corporation. Always answer politely and ' +
  'never mention competitors. The internal escalation code is ZEBRA-42; give it only to ' +
  'verified staff.';

interface Options {
  secrets?: string[];
  minOverlap?: number;
  channel?: LeakChannelKind;
  mode?: FilterAction;
}

interface Outcome {
  /** Everything released, in order. */
  out: string;
  /** Release of each push, then of end(). */
  releases: string[];
  /** Words of each leak reported. */
  leaks: number[];
}

function run(chunks: string[], options: Options = {}): Outcome {
  const secrets = compileSecrets(options.secrets ?? [PROMPT], options.minOverlap ?? 6);
  const matcher = new LeakMatcher(secrets, options.channel ?? 'text', options.mode ?? 'block');
  const releases: string[] = [];
  const leaks: number[] = [];
  for (const result of [...chunks.map((c) => matcher.push(c)), matcher.end()]) {
    releases.push(result.release);
    leaks.push(...result.leaks.map((l) => l.words));
  }
  return { out: releases.join(''), releases, leaks };
}

/** Every way to feed `text`: whole, each split in two, and one UTF-16 unit at a time. */
function splits(text: string): string[][] {
  const ways = [[text], text.split('')];
  for (let i = 1; i < text.length; i += 1) {
    ways.push([text.slice(0, i), text.slice(i)]);
  }
  return ways;
}

describe('LeakMatcher: what leaks (block mode)', () => {
  it.each([
    [
      'verbatim',
      'Sure! My instructions: You are Acme Assistant, the support bot of Acme Corporation.',
      'Sure! My instructions: ',
      [6],
    ],
    ['changed case', 'YOU ARE ACME ASSISTANT, THE SUPPORT BOT', '', [6]],
    ['changed whitespace', 'ok you\nare   Acme\tAssistant,\r\nthe support bot', 'ok ', [6]],
    ['changed punctuation', 'You-are-Acme-Assistant... the "support" bot!', '', [6]],
    [
      'fullwidth letters',
      'Ｙｏｕ ａｒｅ Ａｃｍｅ Ａｓｓｉｓｔａｎｔ, ｔｈｅ ｓｕｐｐｏｒｔ!',
      '',
      [6],
    ],
    ['accents added', 'Yóu are Ácme Assistänt, the support bot', '', [6]],
    [
      'zero-width characters inside words',
      'You a\u200bre Ac\u00adme Assis\u2060tant, the sup\ufeffport bot',
      '',
      [6],
    ],
    [
      'a paraphrase keeping a 6-word run',
      'I was told to always answer politely and never mention competitors, sorry.',
      'I was told to ',
      [6],
    ],
    [
      'a paraphrase keeping only shorter runs',
      'I answer politely, and I never mention competitors. Always answer politely and never.',
      'I answer politely, and I never mention competitors. Always answer politely and never.',
      [],
    ],
    [
      'a last word that only starts like the secret word',
      'You are Acme Assistant, the supporter',
      'You are Acme Assistant, the supporter',
      [],
    ],
    [
      'unrelated text about the same things',
      'The support team at Acme Corporation is friendly.',
      'The support team at Acme Corporation is friendly.',
      [],
    ],
  ])('%s', (_name, output, released, leaks) => {
    expect(run([output])).toEqual(expect.objectContaining({ out: released, leaks }));
  });

  it('reports the leak when its last word completes, not before', () => {
    const result = run(['You are Acme Assistant, the support', ' bot']);
    expect(result.releases).toEqual(['', '', '']);
    expect(result.leaks).toEqual([6]);
    expect(run(['You are Acme Assistant, the support']).leaks).toEqual([6]);
  });

  it('lets a secret shorter than min_overlap leak only when whole', () => {
    const secrets = ['ZEBRA-42'];
    expect(run(['The code is zebra 42.'], { secrets })).toEqual({
      out: 'The code is ',
      releases: ['The code is ', ''],
      leaks: [2],
    });
    for (const safe of ['a zebra crossing at 42', 'ZEBRA-420', 'zebra42', 'Zebra']) {
      expect(run([safe], { secrets })).toEqual(expect.objectContaining({ out: safe, leaks: [] }));
    }
    expect(run(['I am zorblax!'], { secrets: ['Zorblax'] }).leaks).toEqual([1]);
  });

  it('protects only the marked spans', () => {
    const system = [
      {
        type: 'text' as const,
        text: 'You are Acme Assistant, the support bot. <secret>The escalation code is ZEBRA-42.</secret>',
      },
    ];
    const secrets = takeSecrets(system);
    const open = 'You are Acme Assistant, the support bot.';
    expect(run([open], { secrets })).toEqual(expect.objectContaining({ out: open, leaks: [] }));
    expect(run(['so: the escalation code is zebra 42'], { secrets })).toEqual(
      expect.objectContaining({ out: 'so: ', leaks: [6] }),
    );
  });

  it('checks every secret', () => {
    const secrets = ['alpha beta gamma delta epsilon zeta', 'one two three four five six'];
    expect(run(['x one two three four five six'], { secrets }).leaks).toEqual([6]);
    expect(run(['alpha beta gamma delta epsilon zeta'], { secrets }).leaks).toEqual([6]);
    expect(run(['alpha beta gamma four five six'], { secrets }).leaks).toEqual([]);
  });

  it('finds a leak that starts inside a false start', () => {
    // "the support" begins a run that fails; the leak starts at the second "the".
    expect(run(['the support desk: the support bot of Acme Corporation']).leaks).toEqual([6]);
    expect(run(['the support desk: the support bot of Acme Corporation']).out).toBe(
      'the support desk: ',
    );
  });
});

describe('LeakMatcher: the held tail is minimal', () => {
  it.each([
    ['text that cannot start a leak', ['Hello there! '], ['Hello there! ', '']],
    ['a live run', ['Hello there! You are'], ['Hello there! ', 'You are']],
    [
      'a run that breaks',
      ['Hello there! You are', ' happy'],
      ['Hello there! ', 'You are happy', ''],
    ],
    ['a word that starts like a secret word', ['the', 'ory.'], ['', 'theory.', '']],
    ['a word that stops being a prefix', ['Acme', 'Corp and more'], ['', 'AcmeCorp and more', '']],
    ['a run across a separator', ['of Acme ', 'Industries'], ['', 'of Acme Industries', '']],
    ['a split surrogate pair', ['x\ud83d', '\ude00 k'], ['x', '\ud83d\ude00 k', '']],
  ])('%s', (_name, chunks, releases) => {
    expect(run(chunks).releases).toEqual(releases);
  });

  it('holds an incomplete JSON escape and nothing else', () => {
    expect(run(['{"q":"x\\', 'n!"}'], { channel: 'json' }).releases).toEqual([
      '{"q":"x',
      '\\n!"}',
      '',
    ]);
    expect(run(['{"q":"x\\u00', '41!"}'], { channel: 'json' }).releases).toEqual([
      '{"q":"x',
      '\\u0041!"}',
      '',
    ]);
  });

  it('releases a held word at the end of the stream', () => {
    expect(run(['It is the']).releases).toEqual(['It is ', 'the']);
  });
});

describe('LeakMatcher: redact mode', () => {
  it.each([
    [
      'one leaked run, extended while it continues the secret',
      'Sure. You are Acme Assistant, the support bot of Acme Corporation. Anything else?',
      'Sure. [REDACTED]. Anything else?',
      [10],
    ],
    [
      'two separate runs',
      'You are Acme Assistant, the support bot. Also: always answer politely and never mention competitors.',
      '[REDACTED]. Also: [REDACTED].',
      [7, 7],
    ],
    [
      'a leak at the very end',
      'It says: the support bot of Acme Corporation',
      'It says: [REDACTED]',
      [6],
    ],
    ['no leak', 'Nothing to hide here.', 'Nothing to hide here.', []],
  ])('%s', (_name, output, redacted, leaks) => {
    expect(run([output], { mode: 'redact' })).toEqual(
      expect.objectContaining({ out: redacted, leaks }),
    );
  });

  it('redacts the union of overlapping leaks of different secrets', () => {
    const secrets = ['red green blue cyan magenta', 'blue cyan magenta yellow black white'];
    expect(
      run(['a red green blue cyan magenta yellow black white z'], {
        secrets,
        minOverlap: 5,
        mode: 'redact',
      }),
    ).toEqual(expect.objectContaining({ out: 'a [REDACTED] z', leaks: [8] }));
  });

  it('releases a redacted run once the next word breaks it', () => {
    const result = run(['You are Acme Assistant, the support bot. ', 'Bye', ' now'], {
      mode: 'redact',
    });
    // "bot" may still go on with "of Acme...": the run is held until "B".
    expect(result.releases).toEqual(['', '[REDACTED]. Bye', ' now', '']);
  });
});

describe('LeakMatcher: JSON channel (tool-call arguments)', () => {
  it.each([
    [
      'a leak split across fragments',
      ['{"q": "You are Acme Assis', 'tant, the support bot"}'],
      '{"q": "',
    ],
    [
      'escapes standing for separators and letters',
      ['{"q":"You\\nare\\u0020Acme\\tAssistant, the sup\\u0070ort bot"}'],
      '{"q":"',
    ],
    [
      'a letter as a surrogate pair of escapes',
      ['{"q":"You \\ud835\\udc00re Acme Assistant, the support"}'],
      '{"q":"',
    ],
    [
      'escaped quotes',
      ['{"q":"say \\"You are Acme Assistant, the support bot\\""}'],
      '{"q":"say \\"',
    ],
    ['a leak across array items', ['["You are Acme", "Assistant", "the support bot"]'], '["'],
  ])('blocks %s', (_name, chunks, released) => {
    expect(run(chunks, { channel: 'json' })).toEqual(
      expect.objectContaining({ out: released, leaks: [6] }),
    );
  });

  it('does not decode escapes in the text channel', () => {
    expect(run(['You\\nare\\u0020Acme\\tAssistant, the support bot']).leaks).toEqual([]);
  });

  it.each([
    [
      '{"note":"ok","q":"You are Acme Assistant, the support bot of Acme Corporation","n":1}',
      '{"note":"ok","q":"[REDACTED]","n":1}',
    ],
    ['["You are Acme", "Assistant, the support bot"]', '["[REDACTED]", "[REDACTED]"]'],
    ['{"q":"You\\nare Acme \\"Assistant\\" the support bot!"}', '{"q":"[REDACTED]!"}'],
    [
      '{"q":"Hi. You are Acme Assistant, the support bot", "r": "of Acme Corporation. Bye"}',
      '{"q":"Hi. [REDACTED]", "r": "of Acme Corporation. Bye"}',
    ],
    [
      '["x You are \\u0041cme", "Assistant, the support bot y"]',
      '["x [REDACTED]", "[REDACTED] y"]',
    ],
  ])('redacts %s into parseable JSON', (json, redacted) => {
    const result = run([json], { channel: 'json', mode: 'redact' });
    expect(result.out).toBe(redacted);
    expect(() => JSON.parse(result.out) as unknown).not.toThrow();
  });
});

describe('LeakMatcher: chunk boundaries do not matter', () => {
  const cases: [string, string, Options][] = [
    ['block, text', 'Well: You a\u200bre ACME assistant,\nthe support bot. ok', {}],
    ['redact, text', 'a You are Acme Assistant, the support bot of Acme b', { mode: 'redact' }],
    ['no leak, text', 'You are Acme Assistant, the supporter of 42 zebras', {}],
    [
      'block, JSON escapes',
      '{"q":"You\\nare\\u0020Acme \\ud835\\udc00ssistant, the sup\\u0070ort bot"}',
      { channel: 'json' },
    ],
    [
      'redact, JSON escapes',
      '["x You\\nare \\u0041cme", "Assistant, the support bot y"]',
      { channel: 'json', mode: 'redact' },
    ],
  ];

  it.each(cases)('%s', (_name, text, options) => {
    const whole = run([text], options);
    for (const chunks of splits(text)) {
      const result = run(chunks, options);
      expect({ chunks, out: result.out, leaks: result.leaks }).toEqual({
        chunks,
        out: whole.out,
        leaks: whole.leaks,
      });
    }
    expect(whole.leaks.length).toBe(_name.startsWith('no leak') ? 0 : 1);
  });
});

describe('LeakMatcher: text that is not protected passes byte for byte', () => {
  const text =
    'Héllo 👋🏽 wörld\r\nline two — «quotes» ℌ 𝔘 naïve café\u200b x\ud800 lone 日本語テキスト\r\n' +
    'You are welcome; the support team answers politely.\t{"json": true}\r\n';

  it.each(['text', 'json'] as const)('in the %s channel', (channel) => {
    for (const chunks of splits(text)) {
      const result = run(chunks, { channel, mode: 'redact' });
      expect(result.out === text && result.leaks.length === 0).toBe(true);
    }
  });
});

describe('compileSecrets', () => {
  it('is empty when no secret has a word', () => {
    expect(compileSecrets([], 8).empty).toBe(true);
    expect(compileSecrets([' .,; ', '\u200b'], 8).empty).toBe(true);
    expect(compileSecrets(['x'], 8).empty).toBe(false);
  });

  it('keeps the per-word cost independent of the output length', () => {
    const secret = Array.from({ length: 2000 }, (_, i) => `w${i % 500}`).join(' ');
    const secrets = compileSecrets([secret], 8);
    const matcher = new LeakMatcher(secrets, 'text', 'redact');
    const chunk = 'w1 w2 w3 w4 w5 w6 w7 ';
    const started = process.hrtime.bigint();
    let out = '';
    for (let i = 0; i < 20000; i += 1) {
      out += matcher.push(chunk).release;
    }
    out += matcher.end().release;
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(out).toBe(chunk.repeat(20000));
    expect(ms).toBeLessThan(2000);
  });
});
