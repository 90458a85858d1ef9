import { isIPv6 } from 'node:net';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';

/** Addresses tracked at most (oldest window forgotten first), so a spread flood cannot grow memory. */
const MAX_ADDRESSES = 100_000;

interface Window {
  start: number;
  failures: number;
}

/**
 * The client's address as counted: IPv4 as is, IPv6 by its /64, the block one host is
 * given, so that walking through its own addresses does not reset the count.
 */
export function addressKey(ip: string): string {
  if (!isIPv6(ip)) {
    return ip;
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) {
    return mapped[1];
  }
  const [head, tail = ''] = ip.split('%')[0].split('::');
  const left = head === '' ? [] : head.split(':');
  const right = ip.includes('::') && tail !== '' ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/**
 * Failed authentications per client address in a fixed window (AUTH_FAILURE_LIMIT per
 * AUTH_FAILURE_WINDOW_MS). Past the limit, the address's keys are answered from the key
 * cache only: a flood of different random keys costs the key store at most the limit's
 * reads per window and address, and a key already cached keeps working. In memory, per
 * replica: N replicas allow N times the limit.
 */
@Injectable()
export class AuthFailureThrottle {
  private readonly windows = new Map<string, Window>();
  private readonly limit: number;
  private readonly windowMs: number;

  constructor(config: ConfigService<AllConfig, true>) {
    const auth = config.get('auth', { infer: true });
    this.limit = auth.failureLimit ?? 0;
    this.windowMs = auth.failureWindowMs ?? 60_000;
  }

  get enabled(): boolean {
    return this.limit > 0;
  }

  /** Milliseconds until `address` may be looked up again; 0 when it may now. */
  waitMs(address: string, now: number): number {
    const w = this.windows.get(addressKey(address));
    if (w === undefined || w.failures < this.limit) {
      return 0;
    }
    return Math.max(0, w.start + this.windowMs - now);
  }

  /** One more failed authentication from `address`. */
  failed(address: string, now: number): void {
    const key = addressKey(address);
    const w = this.windows.get(key);
    if (w !== undefined && now - w.start < this.windowMs) {
      w.failures++;
      return;
    }
    // A new window goes to the end of the map's order: the first entry is the oldest.
    this.windows.delete(key);
    if (this.windows.size >= MAX_ADDRESSES) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) {
        this.windows.delete(oldest);
      }
    }
    this.windows.set(key, { start: now, failures: 1 });
  }
}
