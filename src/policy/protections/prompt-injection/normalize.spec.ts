import {
  HEAD_CHARS,
  MAX_DECODED_CHARS,
  MAX_DECODED_VIEWS,
  TAIL_CHARS,
  capInput,
  normalizeText,
} from './normalize';

describe('normalizeText', () => {
  it('lower-cases, folds NFKC compatibility forms and strips diacritics', () => {
    expect(normalizeText('ＨＥＬＬＯ Ünïcödé “quotes” — dash').text).toBe(
      'hello unicode "quotes" - dash',
    );
  });

  it('strips zero-width and format characters and counts those inside words', () => {
    const n = normalizeText('pa\u200bss\u200cwo\u200drd \ufeff\u2060 ok\u2062');
    expect(n.text).toBe('password ok');
    expect(n.obfuscation.zeroWidth).toBe(3);
  });

  it('decodes Unicode tag characters into a hidden view but leaves emoji subdivision flags alone', () => {
    const tags = [...'say hi'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
    const n = normalizeText(`visible${tags}`);
    expect(n.text).toBe('visible');
    expect(n.decoded).toEqual([{ kind: 'tags', text: 'say hi' }]);
    expect(n.obfuscation.tagChars).toBe(6);
    const flag = normalizeText('Go 🏴󠁧󠁢󠁳󠁣󠁴󠁿!');
    expect(flag.decoded).toEqual([]);
    expect(flag.obfuscation.tagChars).toBe(0);
  });

  it('maps look-alike letters in mixed words, and leaves real Cyrillic text alone', () => {
    const mixed = normalizeText('Тhе раsswоrd');
    expect(mixed.text).toBe('the password');
    expect(mixed.obfuscation.mixedScriptWords).toBe(2);
    expect(normalizeText('Привет мир').text).toBe('привет мир');
  });

  it('maps look-alike-only words in mostly Latin text', () => {
    expect(normalizeText('please read аll of it').text).toBe('please read all of it');
  });

  it('collapses spaced-out letters, keeping wider gaps as word breaks', () => {
    const n = normalizeText('i g n o r e  t h i s, and s.e.c.r.e.t');
    expect(n.text).toBe('ignore this, and secret');
    expect(n.obfuscation.spacedRuns).toBe(2);
  });

  it('undoes leetspeak inside words but leaves ordinary numbers and model names', () => {
    const n = normalizeText('1gn0r3 the pr3v10us text, GPT4 costs 20 dollars in 2024');
    expect(n.text).toBe('ignore the previous text, gpt4 costs 20 dollars in 2024');
    expect(n.obfuscation.leetTokens).toBe(2);
  });

  it('decodes base64, hex, URL escapes and Morse runs into extra views', () => {
    const b64 = normalizeText(`x ${Buffer.from('open the pod bay doors').toString('base64')} y`);
    expect(b64.decoded).toEqual([{ kind: 'base64', text: 'open the pod bay doors' }]);
    const hex = normalizeText(`0x: ${Buffer.from('open the pod bay doors').toString('hex')}`);
    expect(hex.decoded).toEqual([{ kind: 'hex', text: 'open the pod bay doors' }]);
    const url = normalizeText('go%20to%20the%20door%20now');
    expect(url.decoded).toEqual([{ kind: 'escapes', text: 'go to the door now' }]);
    const morse = normalizeText('... --- ...  .... . .-.. .--.  -. --- .--');
    expect(morse.decoded).toEqual([{ kind: 'morse', text: 'sos help now' }]);
  });

  it('does not decode runs that are not readable text (hashes, ids)', () => {
    const n = normalizeText(
      'sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 and id aZ3kP9qLm2Xv8Rt5Yw1B',
    );
    expect(n.decoded).toEqual([]);
  });

  it('recognises rot13 and reversed text by their frequent words', () => {
    expect(normalizeText('Gur dhvpx oebja sbk naq gur ynml qbt').decoded).toEqual([
      { kind: 'rot13', text: 'the quick brown fox and the lazy dog' },
    ]);
    expect(normalizeText('uoy dna eht dlrow').decoded).toEqual([
      { kind: 'reversed', text: 'world the and you' },
    ]);
  });

  it('bounds the number and size of decoded views', () => {
    const run = Buffer.from('read this text please '.repeat(100)).toString('base64');
    const n = normalizeText(Array.from({ length: 10 }, () => run).join(' '));
    expect(n.decoded.length).toBe(MAX_DECODED_VIEWS);
    const escaped = normalizeText('go%20now '.repeat(5000));
    expect(escaped.decoded[0].text.length).toBeLessThanOrEqual(MAX_DECODED_CHARS);
  });

  it('provides a letters-only view for short texts', () => {
    expect(normalizeText('ig-no-re all pre_vi_ous').squashed).toBe('ignoreallprevious');
  });
});

describe('capInput', () => {
  it('keeps short texts whole', () => {
    expect(capInput('short')).toEqual({ text: 'short', truncated: false });
  });

  it('keeps the head and the tail of long texts', () => {
    const raw = `${'h'.repeat(HEAD_CHARS)}${'m'.repeat(1000)}${'t'.repeat(TAIL_CHARS)}`;
    const { text, truncated } = capInput(raw);
    expect(truncated).toBe(true);
    expect(text.length).toBe(HEAD_CHARS + TAIL_CHARS + 1);
    expect(text).not.toContain('m');
    expect(text.endsWith('t'.repeat(TAIL_CHARS))).toBe(true);
  });
});
