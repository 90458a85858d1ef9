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
 * AUTH_FAILURE_WINDOW_MS). Lookups still in flight count against the limit too, so that
 * a client's concurrency cannot carry it past the limit before its failures are known.
 * Past the limit the address gets no store lookup until its window ends: a flood of
 * different random keys costs the key store at most the limit's reads per window and
 * address. In memory, per replica: N replicas allow N times the limit.
 */
@Injectable()
export class AuthFailureThrottle {
  private readonly windows = new Map<string, Window>();
  private readonly pending = new Map<string, number>();
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

  /**
   * 0 when `address` may have a key looked up now (settle it after), otherwise how many
   * milliseconds it should wait.
   */
  admit(address: string, now: number): number {
    const key = addressKey(address);
    const w = this.windows.get(key);
    const live = w !== undefined && now - w.start < this.windowMs ? w : undefined;
    const failures = live?.failures ?? 0;
    const pending = this.pending.get(key) ?? 0;
    if (live !== undefined && failures >= this.limit) {
      return live.start + this.windowMs - now;
    }
    if (failures + pending >= this.limit) {
      return 1000; // lookups in flight fill the rest of the limit: one of them ends soon
    }
    this.pending.set(key, pending + 1);
    return 0;
  }

  /**
   * A request that joined a lookup already admitted (the same secret, in flight) had its key
   * refused: it counts as a failure, but was never pending.
   */
  refused(address: string, now: number): void {
    this.failed(addressKey(address), now);
  }

  /** The lookup admitted for `address` ended; `failed`: its key was refused. */
  settle(address: string, failed: boolean, now: number): void {
    const key = addressKey(address);
    const pending = (this.pending.get(key) ?? 1) - 1;
    if (pending > 0) {
      this.pending.set(key, pending);
    } else {
      this.pending.delete(key);
    }
    if (failed) {
      this.failed(key, now);
    }
  }

  private failed(key: string, now: number): void {
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
