import type { LimitOverrides } from '../../common/key-policy';
import type { RateLimits } from '../../config/limits.config';
import type { HeaderDimension, RateLimitSnapshot } from './headers';
import {
  type AcquireResult,
  type BucketSpec,
  type LeaseSpec,
  type LimitSpec,
  WINDOW_MS,
} from './rate-limit.store';

export type Metric = 'requests' | 'tokens' | 'streams';

export interface Dimension {
  metric: Metric;
  /** `key`: all of the key's traffic; `model`: the key's traffic to one model. */
  scope: 'key' | 'model';
  spec: LimitSpec;
}

/** What one request takes from the store, decided before the call. */
export interface RatePlan {
  dims: Dimension[];
  /** Tokens reserved (prompt estimate + output cap); 0 without token limits. */
  tokenCost: number;
}

export interface PlanInput {
  /** Redis key prefix (or any namespace for the memory store). */
  prefix: string;
  keyId: string;
  model?: string;
  limits: RateLimits;
  /** The key's limits for this model, when it has any. */
  modelLimits?: LimitOverrides;
  stream: boolean;
  /** False for requests that make the model generate nothing (stored-response replays). */
  chargesTokens?: boolean;
  /** Computed only when a token limit applies (tokenizing costs time). */
  tokenCost(): number;
  leaseId(): string;
}

/** The key's effective limits: environment defaults, then its keys-file overrides. */
export function effectiveLimits(defaults: RateLimits, overrides?: LimitOverrides): RateLimits {
  return overrides ? { ...defaults, ...overrides } : defaults;
}

/**
 * The buckets and leases a request needs, per key and (when configured) per key and
 * model. Undefined when no limit applies, so unlimited traffic never touches the store.
 * The hash tag `{keyId}` keeps one key's counters in one Redis Cluster slot.
 */
export function planRequest(input: PlanInput): RatePlan | undefined {
  const dims: Dimension[] = [];
  let tokenCost = -1;
  let leaseId: string | undefined;
  const add = (scope: 'key' | 'model', limits: LimitOverrides, base: string): void => {
    const rpm = limits.requestsPerMinute ?? 0;
    const tpm = limits.tokensPerMinute ?? 0;
    const streams = limits.maxConcurrentStreams ?? 0;
    if (rpm > 0) {
      const spec: BucketSpec = {
        kind: 'bucket',
        key: `${base}:requests`,
        capacity: rpm,
        windowMs: WINDOW_MS,
        cost: 1,
      };
      dims.push({ metric: 'requests', scope, spec });
    }
    if (tpm > 0 && input.chargesTokens !== false) {
      if (tokenCost < 0) {
        tokenCost = input.tokenCost();
      }
      const spec: BucketSpec = {
        kind: 'bucket',
        key: `${base}:tokens`,
        capacity: tpm,
        windowMs: WINDOW_MS,
        cost: tokenCost,
      };
      dims.push({ metric: 'tokens', scope, spec });
    }
    if (streams > 0 && input.stream) {
      leaseId ??= input.leaseId();
      const spec: LeaseSpec = { kind: 'lease', key: `${base}:streams`, capacity: streams, leaseId };
      dims.push({ metric: 'streams', scope, spec });
    }
  };
  const base = `${input.prefix}{${input.keyId}}`;
  add('key', input.limits, base);
  if (input.model !== undefined && input.modelLimits) {
    add('model', input.modelLimits, `${base}:model:${input.model}`);
  }
  return dims.length > 0 ? { dims, tokenCost: Math.max(tokenCost, 0) } : undefined;
}

/**
 * The requests / tokens figures to report: the dimension that refused, else the tighter
 * of the key-wide and per-model ones (fewest remaining).
 */
export function snapshotOf(plan: RatePlan, result: AcquireResult): RateLimitSnapshot {
  const snapshot: RateLimitSnapshot = {};
  for (const metric of ['requests', 'tokens'] as const) {
    let chosen: HeaderDimension | undefined;
    for (let i = 0; i < plan.dims.length; i++) {
      const dim = plan.dims[i];
      if (dim.metric !== metric) {
        continue;
      }
      const state = result.dims[i];
      const candidate = {
        limit: dim.spec.capacity,
        remaining: state.remaining,
        resetMs: state.resetMs,
      };
      if (i === result.refused) {
        chosen = candidate;
        break;
      }
      if (!chosen || candidate.remaining < chosen.remaining) {
        chosen = candidate;
      }
    }
    if (chosen) {
      snapshot[metric] = chosen;
    }
  }
  return snapshot;
}

/** Error message for a refused request (OpenAI's wording where it has one). */
export function refusalMessage(plan: RatePlan, result: AcquireResult, waitText: string): string {
  const dim = plan.dims[result.refused];
  const state = result.dims[result.refused];
  const where = dim.scope === 'model' ? ' for this model' : '';
  switch (dim.metric) {
    case 'requests':
      return `Rate limit reached for requests per minute${where}: limit ${dim.spec.capacity}. Please try again in ${waitText}.`;
    case 'tokens':
      if (result.retryAfterMs < 0) {
        return `Request too large for tokens per minute${where}: it needs about ${plan.tokenCost} tokens (prompt estimate plus maximum output), the limit is ${dim.spec.capacity}. Reduce the prompt or the maximum output tokens.`;
      }
      return `Rate limit reached for tokens per minute${where}: limit ${dim.spec.capacity}, remaining ${Math.max(0, state.remaining)}, requested about ${plan.tokenCost}. Please try again in ${waitText}.`;
    case 'streams':
      return `Too many concurrent streams${where}: limit ${dim.spec.capacity}. Please try again when a stream has finished.`;
  }
}
