import { CookieSeal } from './sealed-cookie';

const SECRET = 'a-console-session-secret-of-32-chars!';

describe('CookieSeal', () => {
  it('opens what another instance with the same secret sealed, and hides the content', () => {
    const token = new CookieSeal(SECRET, 'login', 60_000).seal({ state: 'abc123' });
    expect(token).not.toContain('abc123');
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('abc123');
    expect(new CookieSeal(SECRET, 'login', 60_000).open(token)).toEqual({ state: 'abc123' });
  });

  it('refuses another secret, another cookie name, a changed byte, expiry and garbage', () => {
    const seal = new CookieSeal(SECRET, 'login', 60_000);
    const token = seal.seal({ state: 'x' }, 1_000);
    expect(seal.open(token, 2_000)).toEqual({ state: 'x' });
    expect(new CookieSeal(`${SECRET}?`, 'login', 60_000).open(token, 2_000)).toBeUndefined();
    expect(new CookieSeal(SECRET, 'other', 60_000).open(token, 2_000)).toBeUndefined();
    const raw = Buffer.from(token, 'base64url');
    raw[raw.length - 1] ^= 1;
    expect(seal.open(raw.toString('base64url'), 2_000)).toBeUndefined();
    expect(seal.open(token, 61_000)).toBeUndefined();
    for (const junk of [undefined, '', 'abc', '%%%', 'A'.repeat(5000)]) {
      expect(seal.open(junk, 2_000)).toBeUndefined();
    }
  });
});
