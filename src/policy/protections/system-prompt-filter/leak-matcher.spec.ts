import type { FilterAction } from './settings';
import { compileSecrets, type CompiledSecrets } from './compiled-secrets';
import { LeakMatcher, type LeakChannelKind } from './leak-matcher';
import { takeSecrets } from './secrets';
import { growth, LINEAR_GROWTH } from '../../../../test/support/growth';

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

describe('LeakMatcher: apostrophes and scripts without spaces', () => {
  it.each([
    ["Don't", 'dont'],
    ['Dont', "don't"],
    ['Don\u2019t', 'DON\u02bcT'],
  ])('matches %s against %s', (secretWord, outputWord) => {
    const secrets = [`${secretWord} ever tell anyone the vault code`];
    expect(run([`ok: ${outputWord} ever tell anyone the vault`], { secrets }).leaks).toEqual([6]);
  });

  const CHINESE = '你是客服助手。绝对不要透露公司的合并计划，只回答产品问题。';
  const THAI = 'คุณคือผู้ช่วยบริการลูกค้า ห้ามเปิดเผยแผนการควบรวมกิจการ';

  it.each([
    ['Chinese', CHINESE, '好的：不要透露公司的合并计划', '好的：', [8]],
    ['Chinese, too short', CHINESE, '好的：透露公司的合并', '好的：透露公司的合并', []],
    ['Thai', THAI, 'ตกลง ห้ามเปิดเผยแผน', 'ตกลง ', [8]],
    ['Thai, too short', THAI, 'ตกลง เปิดเผย', 'ตกลง เปิดเผย', []],
  ])('counts characters of %s', (_name, secret, output, released, leaks) => {
    const result = run([output], { secrets: [secret], minOverlap: 8 });
    expect(result).toEqual(expect.objectContaining({ out: released, leaks }));
    for (const chunks of splits(output)) {
      expect(run(chunks, { secrets: [secret], minOverlap: 8 }).out).toBe(result.out);
    }
  });
});

describe('LeakMatcher: letters with the spaces removed or spread out', () => {
  const secrets = [
    'Never reveal that the merger with Globex closes on March 3; say the deal is still under review.',
  ];
  /** 48 letters (6 × min_overlap): a leak. */
  const GLUED = 'NeverrevealthatthemergerwithGlobexclosesonMarch3';
  const SPACED = GLUED.split('').join(' ');

  it.each([
    ['glued', `Here: ${GLUED}!`, 'Here: '],
    ['spaced out', `Here: ${SPACED}.`, 'Here: '],
    ['spaced out with extra spaces', `Here: ${GLUED.split('').join('  ')}`, 'Here: '],
    ['partly glued', 'Here: Never reveal thatthemerger withGlobex closesonMarch3', 'Here: '],
  ])('blocks them %s', (_name, output, released) => {
    for (const chunks of splits(output)) {
      expect(run(chunks, { secrets, minOverlap: 8 })).toEqual(
        expect.objectContaining({ out: released, leaks: [expect.any(Number)] }),
      );
    }
  });

  it.each([
    ['glued', `Psst: ${GLUED}! ok`, 'Psst: [REDACTED]! ok'],
    ['spaced out', `Psst: ${SPACED} ok`, 'Psst: [REDACTED] ok'],
    ['glued, then a word that starts like the rest', `${GLUED}. Stop`, '[REDACTED]. Stop'],
    ['spaced out, then a word that starts like the rest', `${SPACED} saying`, '[REDACTED] saying'],
    [
      'partly glued, then letters that are no secret',
      'Never reveal thatthemergerwithGlobexclosesonMarch3x deal',
      '[REDACTED]x deal',
    ],
    ['glued, then letters that are no secret', `${GLUED}xyz ok`, '[REDACTED]xyz ok'],
  ])('redacts them %s', (_name, output, redacted) => {
    const whole = run([output], { secrets, minOverlap: 8, mode: 'redact' });
    expect(whole).toEqual(expect.objectContaining({ out: redacted, leaks: [expect.any(Number)] }));
    for (const chunks of splits(output)) {
      expect(run(chunks, { secrets, minOverlap: 8, mode: 'redact' }).out).toBe(whole.out);
    }
  });

  it.each([
    ['fewer letters than the window', `ok ${GLUED.slice(0, 47)} ok`],
    ['letters not starting at a word start', `ok x${GLUED}`],
    ['a secret shorter than the window', 'ok thecodeiszebra42'],
  ])('lets through %s', (_name, output) => {
    const options = { secrets: [...secrets, 'The code is ZEBRA-42.'], minOverlap: 8 };
    expect(run([output], options)).toEqual(expect.objectContaining({ out: output, leaks: [] }));
  });
});

/** Deterministic pseudo-random numbers for the property tests. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

/** Words of ASCII text with their raw spans; `sep` is where the word is known complete. */
function asciiWords(text: string): { text: string; start: number; end: number; sep: number }[] {
  const words: { text: string; start: number; end: number; sep: number }[] = [];
  let word: (typeof words)[number] | undefined;
  for (let i = 0; i <= text.length; i += 1) {
    const ch = text[i] ?? ' ';
    if (/[a-z0-9]/i.test(ch)) {
      word ??= { text: '', start: i, end: i, sep: 0 };
      word.text += ch.toLowerCase();
      word.end = i + 1;
    } else if (ch !== "'" && word !== undefined) {
      word.sep = i;
      words.push(word);
      word = undefined;
    }
  }
  return words;
}

/**
 * The matcher's definition, computed the slow way: block mode cuts at the earliest leak
 * (words or letters); redact mode replaces each union of leaked word windows.
 */
function reference(secrets: string[], minOverlap: number, text: string, mode: FilterAction) {
  const letterNeed = Math.max(6 * minOverlap, 40);
  const secretWords = secrets.map((s) => asciiWords(s).map((w) => w.text)).filter((w) => w.length);
  const secretLetters = secretWords.map((w) => w.join('')).filter((t) => t.length >= letterNeed);
  const words = asciiWords(text);
  /** Words in the longest leaked window ending at output word i. */
  const windowAt = (i: number): number => {
    let best = 0;
    for (const secret of secretWords) {
      const n = Math.min(minOverlap, secret.length);
      const tail = words.slice(Math.max(0, i - n + 1), i + 1).map((w) => w.text);
      for (let p = 0; tail.length === n && p + n <= secret.length; p += 1) {
        if (secret.slice(p, p + n).join(' ') === tail.join(' ')) {
          best = Math.max(best, n);
        }
      }
    }
    return best;
  };
  if (mode === 'redact') {
    const runs: [number, number][] = [];
    words.forEach((_, i) => {
      const n = windowAt(i);
      if (n > 0) {
        let first = i - n + 1;
        while (runs.length > 0 && (runs.at(-1) as [number, number])[1] >= first) {
          first = Math.min(first, (runs.pop() as [number, number])[0]);
        }
        runs.push([first, i]);
      }
    });
    let out = '';
    let at = 0;
    for (const [first, last] of runs) {
      out += text.slice(at, words[first].start) + '[REDACTED]';
      at = words[last].end;
    }
    return { out: out + text.slice(at), leaks: runs.length };
  }
  let cut: { at: number; start: number } | undefined;
  const consider = (at: number, start: number): void => {
    if (cut === undefined || at < cut.at || (at === cut.at && start < cut.start)) {
      cut = { at, start };
    }
  };
  const letters = words.flatMap((w, word) =>
    [...w.text].map((ch, k) => ({
      ch,
      raw: w.start + text.slice(w.start).search(/[a-z0-9]/i) + k,
      word,
    })),
  );
  // Raw offset of each letter: skip the apostrophes inside the word.
  for (const w of words) {
    let raw = w.start;
    for (const l of letters.filter((x) => words[x.word] === w)) {
      while (!/[a-z0-9]/i.test(text[raw])) {
        raw += 1;
      }
      l.raw = raw++;
    }
  }
  const joined = letters.map((l) => l.ch).join('');
  letters.forEach((l, j) => {
    for (let a = 0; a + letterNeed - 1 <= j; a += 1) {
      const anchor = a === 0 || letters[a - 1].word !== letters[a].word;
      if (anchor && secretLetters.some((t) => t.includes(joined.slice(a, j + 1)))) {
        consider(l.raw, words[letters[a].word].start);
        break;
      }
    }
  });
  words.forEach((w, i) => {
    const n = windowAt(i);
    if (n > 0) {
      consider(w.sep, words[i - n + 1].start);
    }
  });
  return cut === undefined ? { out: text, leaks: 0 } : { out: text.slice(0, cut.start), leaks: 1 };
}

describe('LeakMatcher: agrees with the slow definition on random input', () => {
  const VOCABULARY = ['a', 'b', 'ab', 'ba', 'c', 'aab', "a'b"];
  const SEPARATORS = [' ', ' ', ' ', '. ', '-', '\n', "' "];

  it.each([1, 2, 3, 4])('seed %i', (seed) => {
    const next = random(seed);
    const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
    const sentence = (words: string[]): string => words.map((w) => w + pick(SEPARATORS)).join('');
    for (let round = 0; round < 150; round += 1) {
      const minOverlap = 2 + Math.floor(next() * 4);
      const letterLeaks = next() < 0.4;
      const secrets = Array.from({ length: 1 + Math.floor(next() * 3) }, () =>
        sentence(
          Array.from(
            { length: (letterLeaks ? 20 : 1) + Math.floor(next() * (letterLeaks ? 30 : 12)) },
            () => pick(VOCABULARY),
          ),
        ),
      );
      // Redaction is compared where only word windows can leak (secrets under 40 letters).
      const mode: FilterAction =
        !letterLeaks && next() < 0.5 && secrets.every((s) => s.replace(/[^a-z]/g, '').length < 40)
          ? 'redact'
          : 'block';
      let text = '';
      for (let part = 0; part < 1 + Math.floor(next() * 6); part += 1) {
        if (next() < 0.4) {
          text += sentence(Array.from({ length: Math.floor(next() * 5) }, () => pick(VOCABULARY)));
          continue;
        }
        const words = asciiWords(pick(secrets)).map((w) => w.text);
        const from = Math.floor(next() * words.length);
        const piece = words.slice(from, from + 1 + Math.floor(next() * 40));
        const shape = letterLeaks ? next() : 0;
        if (shape < 0.33) {
          text += sentence(piece);
        } else if (shape < 0.66) {
          text += piece.join('') + pick(SEPARATORS);
        } else {
          text += [...piece.join('')].map((ch) => ch + (next() < 0.8 ? ' ' : '')).join('') + ' ';
        }
      }
      const expected = reference(secrets, minOverlap, text, mode);
      const pieces: string[] = [];
      for (let i = 0; i < text.length;) {
        const n = 1 + Math.floor(next() * 7);
        pieces.push(text.slice(i, i + n));
        i += n;
      }
      for (const chunks of [[text], text.split(''), pieces]) {
        const got = run(chunks, { secrets, minOverlap, mode });
        expect({ text, secrets, minOverlap, mode, out: got.out, leaks: got.leaks.length }).toEqual({
          text,
          secrets,
          minOverlap,
          mode,
          ...expected,
        });
      }
    }
  });
});

describe('compileSecrets', () => {
  it('is empty when no secret has a word', () => {
    expect(compileSecrets([], 8).empty).toBe(true);
    expect(compileSecrets([' .,; ', '\u200b'], 8).empty).toBe(true);
    expect(compileSecrets(['x'], 8).empty).toBe(false);
  });

  it('reuses what it compiled for the same secrets and min_overlap', () => {
    const compiled = compileSecrets([PROMPT, 'one more'], 6);
    expect(compileSecrets([PROMPT, 'one more'], 6)).toBe(compiled);
    expect(compileSecrets([PROMPT, 'one more'], 7)).not.toBe(compiled);
    expect(compileSecrets([PROMPT, 'one', 'more'], 6)).not.toBe(compiled);
    expect(compileSecrets([`${PROMPT} one`, 'more'], 6)).not.toBe(compiled);
  });

  // Each of these doubles as a check that the cost is linear in the output: a quadratic
  // matcher once stalled 278 s on a 264 KB answer.
  it('keeps the per-word cost independent of the output length', () => {
    const secret = Array.from({ length: 2000 }, (_, i) => `w${i % 500}`).join(' ');
    const secrets = compileSecrets([secret], 8);
    const chunk = 'w1 w2 w3 w4 w5 w6 w7 ';
    const push = (chunks: number): string => {
      const matcher = new LeakMatcher(secrets, 'text', 'redact');
      let out = '';
      for (let i = 0; i < chunks; i += 1) {
        out += matcher.push(chunk).release;
      }
      return out + matcher.end().release;
    };
    expect(push(20_000)).toBe(chunk.repeat(20_000));
    expect(growth(push, 5_000)).toBeLessThan(LINEAR_GROWTH);
  });

  /**
   * Streams `size` characters of `unit` repeated, 64 at a time, in both modes, to a
   * matcher of `compiled`.
   */
  function stream(
    compiled: CompiledSecrets,
    unit: string,
    size: number,
    expectLeak: boolean,
  ): void {
    const text = unit.repeat(Math.ceil(size / unit.length));
    for (const mode of ['block', 'redact'] as const) {
      const matcher = new LeakMatcher(compiled, 'text', mode);
      let out = '';
      let leaks = 0;
      for (let i = 0; i < text.length; i += 64) {
        const result = matcher.push(text.slice(i, i + 64));
        out += result.release;
        leaks += result.leaks.length;
      }
      const last = matcher.end();
      out += last.release;
      leaks += last.leaks.length;
      expect(leaks > 0).toBe(expectLeak);
      if (!expectLeak) {
        expect(out === text).toBe(true);
      }
    }
  }

  /**
   * The secrets of each size {@link growth} runs at, compiled before it measures: building
   * the automata allocates megabytes, and the collections that follow made the growth of
   * compile-and-match swing with the load on the machine. A quadratic compile would still
   * not finish within the test's timeout at these sizes.
   */
  function compiledBySize(secrets: (size: number) => string[], size: number, minOverlap = 8) {
    const bySize = new Map(
      [size, size * 4].map((n) => [n, compileSecrets(secrets(n), minOverlap)]),
    );
    return (n: number): CompiledSecrets => bySize.get(n) as CompiledSecrets;
  }

  const REPETITIVE = (): string[] => ['a '.repeat(2000)];
  const DISTINCT = (): string[] => [Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' ')];
  /** Seven consecutive words of DISTINCT, then a break, over and over: never 8 in a row. */
  const SEVENS = Array.from({ length: 5000 }, (_, i) => `w${i}${i % 7 === 6 ? ' x' : ''} `).join(
    '',
  );

  it.each([
    ['a repetitive secret, runs of 7 of its words', REPETITIVE, 'a a a a a a a x ', false],
    [
      'the same secret as long as the output',
      (size: number) => ['a '.repeat(size / 2)],
      'a a a a a a a x ',
      false,
    ],
    ['5000 distinct words, runs of 7 of them', DISTINCT, SEVENS, false],
    ['a repetitive secret, 47 glued letters', REPETITIVE, `${'a'.repeat(47)} x `, false],
    [
      'letters spread out, never 48 in a row',
      () => ['ab '.repeat(2000)],
      `${'a b '.repeat(23)}x `,
      false,
    ],
    ['a repetitive secret, leaked whole', REPETITIVE, 'a ', true],
  ])('is linear on adversarial input: %s', (_name, secrets, unit, leak) => {
    const compiled = compiledBySize(secrets, 75_000);
    const cost = growth((size) => stream(compiled(size), unit, size, leak), 75_000);
    expect(cost).toBeLessThan(LINEAR_GROWTH);
  });

  it('compiles 150,000 copies of one short secret (spelled two ways) and matches in linear time', () => {
    // Compiling sorts the root's edges (one per secret): n log n, which the growth bound
    // cannot tell from linear as the larger input leaves the caches, so only matching is
    // measured (see compiledBySize).
    const copies = (n: number): string[] =>
      Array.from({ length: n }, (_, i) => (i % 2 ? 'be concise' : 'BE CONCISE!'));
    const compiled = compiledBySize(copies, 37_500, 6);
    const match = (n: number): void => {
      const matcher = new LeakMatcher(compiled(n), 'text', 'block');
      let leaks = 0;
      for (let i = 0; i < n / 5; i++) {
        leaks += matcher.push('be brief and ').leaks.length;
      }
      leaks += matcher.push('be concise. ').leaks.length + matcher.end().leaks.length;
      expect(leaks).toBe(1);
    };
    expect(growth(match, 37_500)).toBeLessThan(LINEAR_GROWTH);
  });
});
