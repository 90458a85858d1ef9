import type { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';
import { AuthFailureThrottle, addressKey } from './auth-throttle';

function throttle(failureLimit: number, failureWindowMs = 60_000): AuthFailureThrottle {
  return new AuthFailureThrottle({
    get: () => ({ apiKeys: [], failureLimit, failureWindowMs }),
  } as unknown as ConfigService<AllConfig, true>);
}

describe('AuthFailureThrottle', () => {
  it('lets an address fail up to the limit, then makes it wait out the window', () => {
    const t = throttle(3, 10_000);
    for (let i = 0; i < 3; i++) {
      expect(t.waitMs('10.0.0.1', 1000)).toBe(0);
      t.failed('10.0.0.1', 1000);
    }
    expect(t.waitMs('10.0.0.1', 4000)).toBe(7000);
    expect(t.waitMs('10.0.0.2', 4000)).toBe(0); // another address is not concerned
    expect(t.waitMs('10.0.0.1', 11_000)).toBe(0); // the window is over
    t.failed('10.0.0.1', 11_000); // and a new one counts from 1
    expect(t.waitMs('10.0.0.1', 11_000)).toBe(0);
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
    t.failed('2001:db8:1:2::a', 0);
    t.failed('2001:db8:1:2::b', 0);
    expect(t.waitMs('2001:db8:1:2::c', 0)).toBeGreaterThan(0);
    expect(t.waitMs('2001:db8:1:3::a', 0)).toBe(0);
  });
});
