import type { TextPart } from '../../../core/canonical';
import { takeSecrets } from './secrets';

const parts = (...texts: string[]): TextPart[] => texts.map((text) => ({ type: 'text', text }));

describe('takeSecrets', () => {
  it('protects the whole system prompt when nothing is marked', () => {
    const system = parts('You are Acme bot.', 'Be brief.');
    expect(takeSecrets(system)).toEqual(['You are Acme bot.\nBe brief.']);
    expect(system).toEqual(parts('You are Acme bot.', 'Be brief.'));
  });

  it('returns nothing for an empty or blank system prompt', () => {
    expect(takeSecrets([])).toEqual([]);
    expect(takeSecrets(parts('  ', '\n'))).toEqual([]);
  });

  it('returns only the marked spans and strips the markers in place', () => {
    const system = parts(
      'You are Acme bot. <secret>The code is ZEBRA-42.</secret> Be brief.',
      'No secrets here.',
      'Also <SECRET >never discuss pricing</Secret> ok',
    );
    expect(takeSecrets(system)).toEqual(['The code is ZEBRA-42.', 'never discuss pricing']);
    expect(system).toEqual(
      parts(
        'You are Acme bot. The code is ZEBRA-42. Be brief.',
        'No secrets here.',
        'Also never discuss pricing ok',
      ),
    );
  });

  it('treats an unclosed tag as marking the rest of its part only', () => {
    const system = parts('Public. <secret>hidden to the end', 'Public again.');
    expect(takeSecrets(system)).toEqual(['hidden to the end']);
    expect(system).toEqual(parts('Public. hidden to the end', 'Public again.'));
  });

  it('joins a span that one part opens and a later part closes, the parts between included', () => {
    const system = parts(
      'You are Acme bot. <secret>The code is',
      'ZEBRA-42',
      'for staff.</secret> Be brief.',
      'Public.',
    );
    expect(takeSecrets(system)).toEqual(['The code is\nZEBRA-42\nfor staff.']);
    expect(system).toEqual(
      parts('You are Acme bot. The code is', 'ZEBRA-42', 'for staff. Be brief.', 'Public.'),
    );
  });

  it('keeps a span closed in a later part apart from the spans after it', () => {
    const system = parts('<secret>one', 'two</secret> public <secret>three</secret>', 'four');
    expect(takeSecrets(system)).toEqual(['one\ntwo', 'three']);
  });

  it('protects each unclosed tag to the end of its own part, not the tag-less parts after', () => {
    const system = parts('a <secret>b', 'c', 'd <secret>e');
    expect(takeSecrets(system)).toEqual(['b', 'e']);
    expect(system).toEqual(parts('a b', 'c', 'd e'));
  });

  it('survives nested and stray tags', () => {
    const system = parts('a <secret>b <secret>c</secret> d</secret> e</secret> f');
    expect(takeSecrets(system)).toEqual(['b c d']);
    expect(system[0].text).toBe('a b c d e f');
  });

  it('drops blank marked spans', () => {
    const system = parts('x <secret> </secret> y');
    expect(takeSecrets(system)).toEqual([]);
    expect(system[0].text).toBe('x   y');
  });

  it('strips stray closing tags and then protects everything', () => {
    const system = parts('Be kind.</secret>');
    expect(takeSecrets(system)).toEqual(['Be kind.']);
  });
});
