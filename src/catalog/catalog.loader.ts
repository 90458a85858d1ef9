import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { parse as parseYaml } from 'yaml';
import type { WireFormat } from '../core/canonical';
import {
  CatalogFileSchema,
  type DeploymentLimitsSchema,
  ModelSchema,
  ProviderSchema,
  type RetrySchema,
  type TimeoutsSchema,
} from './catalog.schema';
import type {
  Catalog,
  CatalogDeployment,
  CatalogModel,
  CatalogProvider,
  DeploymentLimits,
  RetrySettings,
  TimeoutSettings,
} from './catalog.types';
import type { ProviderDescriptor, ProviderKinds } from './provider-kind';
import { own, setOwn } from '../common/own';
import { validationProblems } from '../common/validation/validation-problems';

/** The catalog file is unusable; `problems` lists every reason, each with its path. */
export class CatalogError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`Invalid catalog ${source}:\n  - ${problems.join('\n  - ')}`);
    this.name = 'CatalogError';
  }
}

function defaultEndpoints(family: string): WireFormat[] {
  // Chat completions serves every model; the Responses API is OpenAI's own.
  return family === 'openai'
    ? ['chat_completions', 'responses', 'messages']
    : ['chat_completions', 'messages'];
}

/** Keeps only the keys that are set, so that a model's settings override its provider's key by key. */
function defined<T extends object>(value: T): Partial<T> | undefined {
  const out = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
  return Object.keys(out).length === 0 ? undefined : (out as Partial<T>);
}

function toRetry(r: RetrySchema | undefined): Partial<RetrySettings> | undefined {
  return r === undefined
    ? undefined
    : defined({ attempts: r.attempts, backoffMs: r.backoff_ms, maxBackoffMs: r.max_backoff_ms });
}

function toTimeouts(t: TimeoutsSchema | undefined): Partial<TimeoutSettings> | undefined {
  return t === undefined
    ? undefined
    : defined({
        connectMs: t.connect_ms,
        firstByteMs: t.first_byte_ms,
        idleMs: t.idle_ms,
        totalMs: t.total_ms,
      });
}

function toLimits(l: DeploymentLimitsSchema | undefined): DeploymentLimits | undefined {
  return l === undefined
    ? undefined
    : defined({
        maxConcurrent: l.max_concurrent,
        requestsPerMinute: l.requests_per_minute,
        tokensPerMinute: l.tokens_per_minute,
      });
}

function toProvider(
  p: ProviderSchema,
  kind: ProviderDescriptor,
  settings: Record<string, string>,
  env: NodeJS.ProcessEnv,
  where: string,
  problems: string[],
): CatalogProvider {
  const fromEnv = p.base_url_env ? own(env, p.base_url_env) : undefined;
  const fallback =
    typeof kind.defaultBaseUrl === 'function' ? kind.defaultBaseUrl(settings) : kind.defaultBaseUrl;
  const baseUrl = (fromEnv || p.base_url || fallback || '').replace(/\/+$/, '');
  if (kind.needsBaseUrl && !baseUrl) {
    problems.push(`${where}.base_url: provider '${p.name}' needs base_url or a set base_url_env`);
  }
  if (fromEnv && !/^https?:\/\/\S+$/.test(fromEnv)) {
    problems.push(`${where}.base_url_env: ${p.base_url_env} is not an http(s) URL`);
  }
  const apiKey = p.api_key_env ? own(env, p.api_key_env) || undefined : undefined;
  return {
    name: p.name,
    kind: p.kind,
    baseUrl,
    apiKey,
    apiKeyEnv: p.api_key_env,
    headers: p.headers ?? {},
    settings,
    available: !kind.needsKey || apiKey !== undefined,
    retry: toRetry(p.retry),
    timeouts: toTimeouts(p.timeouts),
  };
}

function toModel(
  m: ModelSchema,
  deployments: CatalogDeployment[],
  kind: ProviderDescriptor,
  where: string,
  problems: string[],
): CatalogModel {
  // Any model may list the responses endpoint (the translators serve it); by default only
  // the openai family gets it.
  const endpoints = m.endpoints ?? defaultEndpoints(m.family);
  // The model's own provider (what /v1/models, resolution and fallbacks check) is its first
  // deployment that can be called: a keyless first entry must not hide the others.
  const first = deployments.find((d) => d.provider.available) ?? deployments[0];
  const provider = first.provider;
  const upstreamApi = m.upstream_api ?? kind.defaultApi;
  if (!kind.apis.includes(upstreamApi)) {
    const fits = kind.apis.join(' or ');
    problems.push(
      `${where}.upstream_api: '${upstreamApi}' does not fit provider kind '${provider.kind}' (use ${fits})`,
    );
  }
  const created = m.created ? Date.parse(`${m.created}T00:00:00Z`) : 0;
  // Date.parse rolls 2025-02-30 over to March; a real date prints back the same.
  const realDate =
    !m.created || (!Number.isNaN(created) && new Date(created).toISOString().startsWith(m.created));
  if (!realDate) {
    problems.push(`${where}.created: '${m.created}' is not a real date`);
  }
  if (m.max_output_tokens > m.context_window) {
    problems.push(`${where}.max_output_tokens: larger than context_window`);
  }
  return {
    id: m.id,
    upstreamId: first.upstreamId,
    provider,
    family: m.family,
    displayName: m.display_name ?? m.id,
    created: Math.floor(created / 1000),
    contextWindow: m.context_window,
    maxOutputTokens: m.max_output_tokens,
    pricing: {
      input: m.pricing.input,
      output: m.pricing.output,
      cachedInput: m.pricing.cached_input,
      cacheWrite: m.pricing.cache_write,
    },
    capabilities: {
      reasoning: m.capabilities?.reasoning ?? false,
      tools: m.capabilities?.tools ?? false,
      vision: m.capabilities?.vision ?? false,
    },
    endpoints: new Set(endpoints),
    upstreamApi,
    ...(m.cache_breakpoints === 'off' ? { cacheBreakpoints: 'off' as const } : {}),
    // A single deployment is the model's own provider, unless it has limits to count.
    deployments: deployments.length > 1 || deployments[0].limits ? deployments : undefined,
    fallbacks: m.fallbacks,
    retry: toRetry(m.retry),
    timeouts: toTimeouts(m.timeouts),
    cacheTtlS: m.cache?.ttl_s,
  };
}

/**
 * A model's deployments: `provider`/`upstream_id`, or its `deployments` list (exactly one of
 * the two). Every deployment's provider must be of a kind that speaks the model's API.
 */
function toDeployments(
  m: ModelSchema,
  providers: ReadonlyMap<string, CatalogProvider>,
  declared: ReadonlySet<string>,
  where: string,
  problems: string[],
): CatalogDeployment[] | undefined {
  if ((m.provider === undefined) === (m.deployments === undefined)) {
    problems.push(`${where}: set exactly one of provider or deployments`);
    return undefined;
  }
  const listed = m.deployments ?? [
    { provider: m.provider ?? '', upstream_id: m.upstream_id, weight: 1 },
  ];
  const out: CatalogDeployment[] = [];
  listed.forEach((d, j) => {
    const provider = providers.get(d.provider);
    if (provider === undefined) {
      if (!declared.has(d.provider)) {
        const at = m.deployments ? `${where}.deployments[${j}].provider` : `${where}.provider`;
        problems.push(`${at}: unknown provider '${d.provider}'`);
      }
      return;
    }
    const limits = toLimits(d.limits);
    out.push({
      provider,
      upstreamId: d.upstream_id ?? m.upstream_id ?? m.id,
      weight: d.weight ?? 1,
      ...(limits === undefined ? {} : { limits }),
    });
  });
  return out.length === listed.length ? out : undefined;
}

/**
 * Takes each provider entry's kind-specific keys (its descriptor's `settings`) out of the
 * raw file before the schema, which knows no kind, rejects unknown keys.
 */
function takeSettings(
  raw: Record<string, unknown>,
  kinds: ProviderKinds,
  problems: string[],
): Record<string, string>[] {
  const providers = Array.isArray(raw.providers) ? (raw.providers as unknown[]) : [];
  return providers.map((entry, i) => {
    const settings: Record<string, string> = {};
    if (typeof entry !== 'object' || entry === null) {
      return settings;
    }
    const p = entry as Record<string, unknown>;
    const kind = typeof p.kind === 'string' ? kinds.get(p.kind) : undefined;
    if (typeof p.kind === 'string' && kind === undefined) {
      problems.push(
        `providers[${i}].kind: unknown provider kind '${p.kind}' (known: ${[...kinds.keys()].join(', ')})`,
      );
      // The kind is the mistake: keys some kind accepts are not reported as well.
      for (const known of kinds.values()) {
        for (const setting of known.settings ?? []) {
          Reflect.deleteProperty(p, setting.key);
        }
      }
    }
    for (const setting of kind?.settings ?? []) {
      const value = own(p, setting.key);
      Reflect.deleteProperty(p, setting.key);
      if (value === undefined) {
        if (setting.required) {
          problems.push(`providers[${i}].${setting.key}: required for kind '${kind?.kind}'`);
        } else if (setting.default !== undefined) {
          setOwn(settings, setting.key, setting.default);
        }
      } else if (typeof value !== 'string' || value === '') {
        problems.push(`providers[${i}].${setting.key}: must be a non-empty string`);
      } else {
        setOwn(settings, setting.key, value);
      }
    }
    return settings;
  });
}

/**
 * Parses and validates catalog YAML text; provider URLs and keys are read from `env`, and
 * each provider entry is checked against the descriptor of its kind in `kinds`.
 */
export function parseCatalog(
  text: string,
  env: NodeJS.ProcessEnv,
  source: string,
  kinds: ProviderKinds,
): Catalog {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new CatalogError(source, [`not valid YAML: ${(e as Error).message}`]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new CatalogError(source, ['the file must be a mapping with `providers` and `models`']);
  }
  const problems: string[] = [];
  const settings = takeSettings(raw as Record<string, unknown>, kinds, problems);
  const file = plainToInstance(CatalogFileSchema, raw);
  // Unknown keys are errors: a misspelled api_key_env would otherwise hide a provider.
  const options = { forbidUnknownValues: true, whitelist: true, forbidNonWhitelisted: true };
  validationProblems(validateSync(file, options), '', problems);
  if (problems.length > 0) {
    throw new CatalogError(source, problems);
  }

  const providers = new Map<string, CatalogProvider>();
  file.providers.forEach((p, i) => {
    if (providers.has(p.name)) {
      problems.push(`providers[${i}].name: duplicate provider '${p.name}'`);
    }
    const kind = kinds.get(p.kind);
    if (kind !== undefined) {
      providers.set(
        p.name,
        toProvider(p, kind, settings[i] ?? {}, env, `providers[${i}]`, problems),
      );
    }
  });
  const models = new Map<string, CatalogModel>();
  const declared = new Set(file.providers.map((p) => p.name));
  file.models.forEach((m, i) => {
    const where = `models[${i}]`;
    const deployments = toDeployments(m, providers, declared, where, problems);
    const first = deployments?.[0];
    const kind = first && kinds.get(first.provider.kind);
    if (!deployments || !first || !kind) {
      return;
    }
    if (models.has(m.id)) {
      problems.push(`${where}.id: duplicate model '${m.id}'`);
    }
    const model = toModel(m, deployments, kind, where, problems);
    // The first deployment's kind is checked by toModel, with its own message.
    deployments.slice(1).forEach((d, j) => {
      if (!kinds.get(d.provider.kind)?.apis.includes(model.upstreamApi)) {
        problems.push(
          `${where}.deployments[${j + 1}].provider: kind '${d.provider.kind}' does not speak ${model.upstreamApi}`,
        );
      }
    });
    models.set(m.id, model);
  });
  file.models.forEach((m, i) => {
    (m.fallbacks ?? []).forEach((id, j) => {
      if (!models.has(id) || id === m.id) {
        problems.push(`models[${i}].fallbacks[${j}]: '${id}' is not another catalog model`);
      }
    });
  });
  if (problems.length > 0) {
    throw new CatalogError(source, problems);
  }
  return { providers, models };
}

/** Reads the catalog file at `path`. */
export function loadCatalog(
  path: string,
  kinds: ProviderKinds,
  env: NodeJS.ProcessEnv = process.env,
): Catalog {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CatalogError(path, [
      `cannot read the file: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
    ]);
  }
  return parseCatalog(text, env, path, kinds);
}
