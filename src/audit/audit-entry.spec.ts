import { diff, isAuditAction, redact } from './audit-entry';

describe('audit entries', () => {
  it('redacts secret-named fields and secret-looking values at any depth', () => {
    const out = redact({
      name: 'plain',
      key: 'gw-whatever',
      client_secret: 'x',
      nested: {
        Authorization: 'Bearer abc',
        note: 'call with Bearer abcdef please',
        list: ['sk-0123456789abcdefXYZ', 'ok'],
      },
      jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln',
      budget: { amount_usd: 5 },
      big: 10n,
    });
    expect(out).toEqual({
      name: 'plain',
      key: '[redacted]',
      client_secret: '[redacted]',
      nested: { Authorization: '[redacted]', note: '[redacted]', list: ['[redacted]', 'ok'] },
      jwt: '[redacted]',
      budget: { amount_usd: 5 },
      big: '10',
    });
  });

  it('keeps a __proto__ field as data, not as the prototype', () => {
    const out = redact(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('diffs only the fields that changed, with before and after', () => {
    expect(
      diff(
        { name: 'a', budget: { amount_usd: 5, period: 'month' }, models: null, owner: 't' },
        { name: 'a', budget: { amount_usd: 7, period: 'day' }, models: ['m'], owner: 't' },
      ),
    ).toEqual({
      budget: { from: { amount_usd: 5, period: 'month' }, to: { amount_usd: 7, period: 'day' } },
      models: { from: null, to: ['m'] },
    });
    expect(diff(null, { name: 'new' })).toEqual({ name: { from: null, to: 'new' } });
  });

  it('accepts domain.verb action names only', () => {
    expect(isAuditAction('team.budget_update')).toBe(true);
    expect(isAuditAction('Key.Create')).toBe(false);
    expect(isAuditAction('key')).toBe(false);
  });
});
