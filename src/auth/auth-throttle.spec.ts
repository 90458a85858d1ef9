import type { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';
import { AuthFailureThrottle, addressKey } from './auth-throttle';

function throttle(failureLimit: number, failureWindowMs = 60_000): AuthFailureThrottle {
  return new AuthFailureThrottle({
    get: () => ({ apiKeys: [], failureLimit, failureWindowMs }),
  } as unknown as ConfigService<AllConfig, true>);
}

/** One admitted lookup of `ip` at `now` that fails. */
function fail(t: AuthFailureThrottle, ip: string, now: number): void {
  expect(t.admit(ip, now)).toBe(0);
  t.settle(ip, true, now);
}

describe('AuthFailureThrottle', () => {
  it('lets an address fail up to the limit, then makes it wait out the window', () => {
    const t = throttle(3, 10_000);
    for (let i = 0; i < 3; i++) {
      fail(t, '10.0.0.1', 1000);
    }
    expect(t.admit('10.0.0.1', 4000)).toBe(7000);
    expect(t.admit('10.0.0.2', 4000)).toBe(0); // another address is not concerned
    t.settle('10.0.0.2', false, 4000);
    fail(t, '10.0.0.1', 11_000); // the window is over, and a new one counts from 1
    expect(t.admit('10.0.0.1', 11_000)).toBe(0);
  });

  it('counts lookups in flight against the limit, and forgets those that succeed', () => {
    const t = throttle(3);
    expect([t.admit('10.0.0.1', 0), t.admit('10.0.0.1', 0), t.admit('10.0.0.1', 0)]).toEqual([
      0, 0, 0,
    ]);
    expect(t.admit('10.0.0.1', 0)).toBe(1000);
    t.settle('10.0.0.1', false, 0);
    t.settle('10.0.0.1', false, 0);
    t.settle('10.0.0.1', true, 0);
    expect(t.admit('10.0.0.1', 0)).toBe(0);
  });

  it('counts a refusal of a request that joined a lookup in flight, which took no admission', () => {
    const t = throttle(2);
    expect(t.admit('10.0.0.1', 0)).toBe(0);
    t.refused('10.0.0.1', 0);
    t.settle('10.0.0.1', true, 0);
    expect(t.admit('10.0.0.1', 0)).toBe(60_000);
  });

  it('is off with a limit of 0', () => {
    expect(throttle(0).enabled).toBe(false);
    expect(throttle(1).enabled).toBe(true);
  });

  it('counts an IPv6 host by its /64, and an IPv4-mapped address as IPv4', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(addressKey('10.1.2.3')).toBe('10.1.2.3');
    const t = throttle(2);
    fail(t, '2001:db8:1:2::a', 0);
    fail(t, '2001:db8:1:2::b', 0);
    expect(t.admit('2001:db8:1:2::c', 0)).toBeGreaterThan(0);
    expect(t.admit('2001:db8:1:3::a', 0)).toBe(0);
  });
});
