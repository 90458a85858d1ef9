import { toWords } from './words';

describe('toWords', () => {
  it.each([
    ['case, accents, compatibility forms', 'Ｙóu ARE Straße', ['you', 'are', 'strasse']],
    ['zero-width characters inside words', 'a\u200bb c\u00add', ['ab', 'cd']],
    [
      'apostrophes join a word',
      "Don't Dont Don\u2019t Don\u02bct Don\u2018t",
      Array(5).fill('dont'),
    ],
    ['apostrophes around words', "'quoted' words' end", ['quoted', 'words', 'end']],
    ['punctuation and spaces split', 'a-b.c\nd', ['a', 'b', 'c', 'd']],
  ])('%s', (_name, text, words) => {
    expect(toWords(text)).toEqual(words);
  });

  it.each([
    ['Chinese', '你好，世界abc', ['你', '好', '世', '界', 'abc']],
    ['Japanese', '東京2024年のコーヒー', ['東', '京', '2024', '年', 'の', 'コ', 'ー', 'ヒ', 'ー']],
    ['Thai, marks kept with their letter', 'ที่นี่ ครับ', ['ที่', 'นี่', 'ค', 'รั', 'บ']],
  ])('makes each character of %s a word', (_name, text, words) => {
    expect(toWords(text)).toEqual(words);
  });

  it('folds halfwidth katakana with a separate voiced mark like the composed letter', () => {
    expect(toWords('ｶﾞ')).toEqual(toWords('ガ'));
    expect(toWords('ｶﾞ')).toHaveLength(1);
  });
});
