import type { CatalogDeployment } from '../catalog/catalog.types';
import type { DeploymentHealth } from './deployment-health';
import type { DeploymentLimiter } from './deployment-limiter';

/** A deployment with its health (and its own limits, when it has any), as the picker weighs it. */
export interface Candidate {
  deployment: CatalogDeployment;
  health: DeploymentHealth;
  limiter?: DeploymentLimiter;
}

const hasLimits = (c: Candidate): boolean => c.limiter !== undefined;

function weighted(candidates: readonly Candidate[], random: () => number): Candidate {
  const total = candidates.reduce((sum, c) => sum + c.deployment.weight, 0);
  if (total <= 0) {
    return candidates[Math.floor(random() * candidates.length)];
  }
  let point = random() * total;
  for (const c of candidates) {
    point -= c.deployment.weight;
    if (point < 0) {
      return c;
    }
  }
  return candidates[candidates.length - 1];
}

/**
 * Envoy's least-request balancing ("power of two choices"): two draws by weight, the one
 * with fewer requests in flight per unit of weight wins. Idle traffic follows the weights;
 * a deployment that slows down (its requests pile up) gets less. Healthy deployments not yet
 * tried by this request come first, then healthy ones again (retries on a single one); when every one is ejected, the one whose
 * cooldown ends first is tried anyway, once (never a hard failure while a degraded answer is
 * possible: Envoy's `max_ejection_percent` below 100%). A deployment at its own limits is
 * not a candidate at all.
 */
export function pickDeployment(
  candidates: readonly Candidate[],
  tried: ReadonlySet<CatalogDeployment>,
  now: number,
  random: () => number = Math.random,
  sticky?: string,
): Candidate | undefined {
  const all = candidates.some(hasLimits)
    ? candidates.filter((c) => c.limiter === undefined || c.limiter.waitMs(now) === 0)
    : candidates;
  if (all.length === 0) {
    return undefined;
  }
  const healthy = all.filter((c) => c.health.available(now));
  if (healthy.length === 0) {
    // Another deployment already failed for this request: no degraded try on an ejected one.
    return tried.size > 0
      ? undefined
      : all.reduce<Candidate | undefined>(
          (a, b) => (a === undefined || b.health.openUntil < a.health.openUntil ? b : a),
          undefined,
        );
  }
  const fresh = healthy.filter((c) => !tried.has(c.deployment));
  if (sticky !== undefined && tried.size === 0 && healthy.length > 1) {
    return stickyChoice(healthy, sticky);
  }
  return choose(fresh.length > 0 ? fresh : healthy, random);
}

function choose(healthy: readonly Candidate[], random: () => number): Candidate | undefined {
  if (healthy.length === 1) {
    return healthy[0];
  }
  const a = weighted(healthy, random);
  const b = weighted(healthy, random);
  const load = (c: Candidate): number => c.health.inFlight / Math.max(c.deployment.weight, 1e-9);
  return load(b) < load(a) ? b : a;
}

/** FNV-1a, 32 bits: a cheap, stable hash for rendezvous choice. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Rendezvous (highest random weight) hashing of a conversation key over the healthy
 * deployments, weighted: every turn of one conversation lands on the same deployment while
 * it stays healthy, and only the conversations of a deployment that leaves move.
 */
function stickyChoice(healthy: readonly Candidate[], key: string): Candidate {
  let best = healthy[0];
  let bestScore = -Infinity;
  for (const c of healthy) {
    const u = (fnv1a(`${key}\u0000${c.deployment.provider.name}`) + 1) / 4294967297;
    const score = -c.deployment.weight / Math.log(u);
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

/**
 * When every deployment of a model is at its own limits: the milliseconds until the first
 * one may take a request again. Undefined when one may take it now, or one has no limits.
 */
export function capacityWaitMs(candidates: readonly Candidate[], now: number): number | undefined {
  let wait: number | undefined;
  for (const c of candidates) {
    const ms = c.limiter?.waitMs(now) ?? 0;
    if (ms === 0) {
      return undefined;
    }
    wait = wait === undefined ? ms : Math.min(wait, ms);
  }
  return wait;
}
