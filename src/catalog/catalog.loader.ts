import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { parse as parseYaml } from 'yaml';
import type { WireFormat } from '../core/canonical';
import { CatalogFileSchema, ModelSchema, ProviderSchema } from './catalog.schema';
import type { Catalog, CatalogModel, CatalogProvider, UpstreamApi } from './catalog.types';
import { own } from '../common/own';

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

const DEFAULT_UPSTREAM_API: Record<CatalogProvider['kind'], UpstreamApi> = {
  openai: 'chat_completions',
  'openai-compatible': 'chat_completions',
  anthropic: 'messages',
  local: 'local',
};

/** The upstream APIs each provider kind actually speaks. */
const UPSTREAM_APIS_BY_KIND: Record<CatalogProvider['kind'], UpstreamApi[]> = {
  openai: ['chat_completions', 'responses'],
  'openai-compatible': ['chat_completions', 'responses'],
  anthropic: ['messages'],
  local: ['local'],
};

function defaultEndpoints(family: string): WireFormat[] {
  // Chat completions serves every model; the Responses API is OpenAI's own.
  return family === 'openai'
    ? ['chat_completions', 'responses', 'messages']
    : ['chat_completions', 'messages'];
}

function toProvider(
  p: ProviderSchema,
  env: NodeJS.ProcessEnv,
  where: string,
  problems: string[],
): CatalogProvider {
  const fromEnv = p.base_url_env ? own(env, p.base_url_env) : undefined;
  const baseUrl = (fromEnv || p.base_url || '').replace(/\/+$/, '');
  if (p.kind !== 'local' && !baseUrl) {
    problems.push(`${where}.base_url: provider '${p.name}' needs base_url or a set base_url_env`);
  }
  if (fromEnv && !/^https?:\/\/\S+$/.test(fromEnv)) {
    problems.push(`${where}.base_url_env: ${p.base_url_env} is not an http(s) URL`);
  }
  const apiKey = p.api_key_env ? own(env, p.api_key_env) || undefined : undefined;
  const needsKey = p.kind === 'openai' || p.kind === 'anthropic';
  return {
    name: p.name,
    kind: p.kind,
    baseUrl,
    apiKey,
    apiKeyEnv: p.api_key_env,
    headers: p.headers ?? {},
    anthropicVersion: p.anthropic_version,
    available: !needsKey || apiKey !== undefined,
  };
}

function toModel(
  m: ModelSchema,
  provider: CatalogProvider,
  where: string,
  problems: string[],
): CatalogModel {
  const endpoints = m.endpoints ?? defaultEndpoints(m.family);
  if (endpoints.includes('responses') && m.family !== 'openai') {
    problems.push(`${where}.endpoints: the responses endpoint serves only the openai family`);
  }
  const upstreamApi = m.upstream_api ?? DEFAULT_UPSTREAM_API[provider.kind];
  if (!UPSTREAM_APIS_BY_KIND[provider.kind].includes(upstreamApi)) {
    const fits = UPSTREAM_APIS_BY_KIND[provider.kind].join(' or ');
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

/** Parses and validates catalog YAML text; provider URLs and keys are read from `env`. */
export function parseCatalog(text: string, env: NodeJS.ProcessEnv, source = 'catalog'): Catalog {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new CatalogError(source, [`not valid YAML: ${(e as Error).message}`]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new CatalogError(source, ['the file must be a mapping with `providers` and `models`']);
  }
  const file = plainToInstance(CatalogFileSchema, raw);
  const problems: string[] = [];
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
    providers.set(p.name, toProvider(p, env, `providers[${i}]`, problems));
  });
  const models = new Map<string, CatalogModel>();
  file.models.forEach((m, i) => {
    const where = `models[${i}]`;
    const provider = providers.get(m.provider);
    if (!provider) {
      problems.push(`${where}.provider: unknown provider '${m.provider}'`);
      return;
    }
    if (models.has(m.id)) {
      problems.push(`${where}.id: duplicate model '${m.id}'`);
    }
    models.set(m.id, toModel(m, provider, where, problems));
  });
  if (problems.length > 0) {
    throw new CatalogError(source, problems);
  }
  return { providers, models };
}

/** Reads the catalog file at `path`. */
export function loadCatalog(path: string, env: NodeJS.ProcessEnv = process.env): Catalog {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CatalogError(path, [
      `cannot read the file: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
    ]);
  }
  return parseCatalog(text, env, path);
}
