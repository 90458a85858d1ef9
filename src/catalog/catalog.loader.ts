import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { parse as parseYaml } from 'yaml';
import type { WireFormat } from '../core/canonical';
import { CatalogFileSchema, ModelSchema, ProviderSchema } from './catalog.schema';
import type { Catalog, CatalogModel, CatalogProvider } from './catalog.types';
import type { ProviderDescriptor, ProviderKinds } from './provider-kind';
import { own, setOwn } from '../common/own';

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

function flatten(errors: ValidationError[], prefix: string, out: string[]): void {
  for (const e of errors) {
    const key = /^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : `${prefix}.${e.property}`;
    const path = key.replace(/^\./, '');
    for (const message of Object.values(e.constraints ?? {})) {
      out.push(`${path}: ${message}`);
    }
    flatten(e.children ?? [], path, out);
  }
}

function defaultEndpoints(family: string): WireFormat[] {
  // Chat completions serves every model; the Responses API is OpenAI's own.
  return family === 'openai'
    ? ['chat_completions', 'responses', 'messages']
    : ['chat_completions', 'messages'];
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
  const baseUrl = (fromEnv || p.base_url || kind.defaultBaseUrl || '').replace(/\/+$/, '');
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
  };
}

function toModel(
  m: ModelSchema,
  provider: CatalogProvider,
  kind: ProviderDescriptor,
  where: string,
  problems: string[],
): CatalogModel {
  // Any model may list the responses endpoint (the translators serve it); by default only
  // the openai family gets it.
  const endpoints = m.endpoints ?? defaultEndpoints(m.family);
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
    upstreamId: m.upstream_id ?? m.id,
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
  };
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
  flatten(validateSync(file, options), '', problems);
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
  file.models.forEach((m, i) => {
    const where = `models[${i}]`;
    const provider = providers.get(m.provider);
    const kind = provider && kinds.get(provider.kind);
    if (!provider || !kind) {
      if (!file.providers.some((p) => p.name === m.provider)) {
        problems.push(`${where}.provider: unknown provider '${m.provider}'`);
      }
      return;
    }
    if (models.has(m.id)) {
      problems.push(`${where}.id: duplicate model '${m.id}'`);
    }
    models.set(m.id, toModel(m, provider, kind, where, problems));
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
