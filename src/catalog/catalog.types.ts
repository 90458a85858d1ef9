import type { WireFormat } from '../core/canonical';
import type { UpstreamApi } from './provider-kind';

export type { UpstreamApi };
/** A provider kind, as its driver's descriptor names it (see provider-kind.ts). */
export type ProviderKind = string;

/** A provider entry of the catalog, with its base URL and key resolved from the environment. */
export interface CatalogProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  /** Resolved key; undefined when the variable is unset. Never logged. */
  apiKey?: string;
  apiKeyEnv?: string;
  headers: Record<string, string>;
  /** The kind's own keys (`anthropic_version`, `api_version`), defaults applied. */
  settings?: Readonly<Record<string, string>>;
  /** False when the provider needs a key that is not configured. */
  available: boolean;
  /** The provider's own retry and timeout settings (the model's override them). */
  retry?: Partial<RetrySettings>;
  timeouts?: Partial<TimeoutSettings>;
}

/** Retries of one upstream call: attempts in all (first included), backoff base and cap. */
export interface RetrySettings {
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
}

/** Deadlines of one upstream call, in milliseconds. */
export interface TimeoutSettings {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  totalMs: number;
}

/** One deployment of a model: the provider that serves it and its id there. */
export interface CatalogDeployment {
  provider: CatalogProvider;
  upstreamId: string;
  /** Share of the traffic among healthy deployments (0: only when the others are down). */
  weight: number;
  /** Its own limits: when it is at one, the picker skips it. */
  limits?: DeploymentLimits;
}

/** A deployment's own limits (each key optional), counted per gateway replica. */
export interface DeploymentLimits {
  maxConcurrent?: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

export interface ModelPricing {
  /** USD per million tokens. */
  input: number;
  output: number;
  cachedInput?: number;
  cacheWrite?: number;
}

/** A model clients can name, with what the gateway needs to route and account for it. */
export interface CatalogModel {
  id: string;
  upstreamId: string;
  provider: CatalogProvider;
  family: string;
  displayName: string;
  /** Unix seconds. */
  created: number;
  contextWindow: number;
  maxOutputTokens: number;
  pricing: ModelPricing;
  capabilities: { reasoning: boolean; tools: boolean; vision: boolean };
  endpoints: ReadonlySet<WireFormat>;
  upstreamApi: UpstreamApi;
  /**
   * `off`: the gateway places no prompt-cache breakpoints of its own on translated requests
   * (see to-anthropic.ts); absent or `auto`: it does.
   */
  cacheBreakpoints?: 'auto' | 'off';
  /**
   * Every deployment, the first being `provider`/`upstreamId` (absent: that one alone).
   * Providers of one model share its upstream API.
   */
  deployments?: readonly CatalogDeployment[];
  /** Catalog models tried in order when this one cannot serve. */
  fallbacks?: readonly string[];
  /** The model's retry and timeout settings over its provider's. */
  retry?: Partial<RetrySettings>;
  timeouts?: Partial<TimeoutSettings>;
  /**
   * Seconds an answer of this model is replayed from the response cache (0: never); absent:
   * RESPONSE_CACHE_TTL_S decides.
   */
  cacheTtlS?: number;
}

export interface Catalog {
  providers: ReadonlyMap<string, CatalogProvider>;
  models: ReadonlyMap<string, CatalogModel>;
}
