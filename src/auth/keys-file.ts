import { readFileSync } from 'node:fs';
import { plainToInstance, Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsInt,
  IsObject,
  IsOptional,
  Matches,
  Min,
  ValidateNested,
  validateSync,
} from 'class-validator';
import { parse as parseYaml } from 'yaml';
import { ConfigValidationError } from '../config';
import type { LimitOverrides } from '../common/key-policy';
import { own } from '../common/own';
import { validationProblems } from '../common/validation/validation-problems';
import { sha256Hex } from '../keys/key-secret';

/**
 * The keys file (`GATEWAY_KEYS_FILE`): client keys and what applies to each. Keys are
 * never written in it, only their SHA-256 (hex) or the name of the variable that holds
 * them. The shape leaves room for what later issues add per key (allowed models, expiry):
 *
 * ```yaml
 * defaults: { requests_per_minute: 600 }   # every key, unless the key says otherwise
 * models:                                  # per model, counted per key
 *   gpt-5: { tokens_per_minute: 200000 }
 * keys:
 *   - name: search-team                    # label for logs (optional)
 *     sha256: 9f86d08...                   # or: key_env: SEARCH_TEAM_KEY
 *     limits: { requests_per_minute: 60, tokens_per_minute: 100000, max_concurrent_streams: 4 }
 *     models:
 *       gpt-5: { requests_per_minute: 10 }
 *     admin: true                          # may reach stored objects with no owner record
 * ```
 */

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

export class RateLimitsSchema {
  @IsOptional() @IsInt() @Min(0) requests_per_minute?: number;
  @IsOptional() @IsInt() @Min(0) tokens_per_minute?: number;
  @IsOptional() @IsInt() @Min(0) max_concurrent_streams?: number;
}

export class KeyEntrySchema {
  @IsOptional() @Matches(/^[\w.-]{1,64}$/) name?: string;
  @IsOptional()
  @Matches(/^[0-9a-f]{64}$/i, { message: 'sha256 must be 64 hex characters' })
  sha256?: string;
  @IsOptional()
  @Matches(ENV_NAME, { message: 'key_env must be a variable name' })
  key_env?: string;
  @IsOptional() @ValidateNested() @Type(() => RateLimitsSchema) limits?: RateLimitsSchema;
  @IsOptional() @IsObject() models?: Record<string, unknown>;
  @IsOptional() @IsBoolean() admin?: boolean;
}

export class KeysFileSchema {
  @IsOptional() @ValidateNested() @Type(() => RateLimitsSchema) defaults?: RateLimitsSchema;
  @IsOptional() @IsObject() models?: Record<string, unknown>;
  @IsArray() @ValidateNested({ each: true }) @Type(() => KeyEntrySchema) keys!: KeyEntrySchema[];
}

export interface KeyFileEntry {
  /** SHA-256 (lower-case hex) of the key. */
  hash: string;
  name?: string;
  /** The variable holding the key, when the entry names one (`key_env`). */
  keyEnv?: string;
  limits: LimitOverrides;
  models: Map<string, LimitOverrides>;
  /** May reach stored objects the gateway has no owner record of (see src/ownership). */
  admin: boolean;
}

export interface KeysFile {
  defaults: LimitOverrides;
  models: Map<string, LimitOverrides>;
  keys: KeyFileEntry[];
}

const VALIDATION = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true };

function toOverrides(schema: RateLimitsSchema | undefined): LimitOverrides {
  const out: LimitOverrides = {};
  if (schema?.requests_per_minute !== undefined) {
    out.requestsPerMinute = schema.requests_per_minute;
  }
  if (schema?.tokens_per_minute !== undefined) {
    out.tokensPerMinute = schema.tokens_per_minute;
  }
  if (schema?.max_concurrent_streams !== undefined) {
    out.maxConcurrentStreams = schema.max_concurrent_streams;
  }
  return out;
}

/** Validates a `models:` map (model id -> limits); problems carry their path. */
function modelLimits(
  raw: Record<string, unknown> | undefined,
  where: string,
  problems: string[],
): Map<string, LimitOverrides> {
  const out = new Map<string, LimitOverrides>();
  for (const [model, value] of Object.entries(raw ?? {})) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${where}.${model}: must be a mapping of limits`);
      continue;
    }
    const schema = plainToInstance(RateLimitsSchema, value);
    validationProblems(validateSync(schema, VALIDATION), `${where}.${model}`, problems);
    out.set(model, toOverrides(schema));
  }
  return out;
}

/** Parses and validates keys-file YAML; `key_env` names are read from `env`. */
export function parseKeysFile(text: string, env: NodeJS.ProcessEnv, source: string): KeysFile {
  const fail = (problems: string[]): never => {
    throw new ConfigValidationError(problems.map((p) => `GATEWAY_KEYS_FILE ${source}: ${p}`));
  };
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    return fail([`not valid YAML: ${(e as Error).message}`]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return fail(['the file must be a mapping with a `keys` list']);
  }
  const file = plainToInstance(KeysFileSchema, raw);
  const problems: string[] = [];
  validationProblems(validateSync(file, VALIDATION), '', problems);
  if (problems.length > 0) {
    return fail(problems);
  }
  const models = modelLimits(file.models, 'models', problems);
  const seen = new Map<string, number>();
  const keys = file.keys.map((entry, i): KeyFileEntry => {
    const where = `keys[${i}]`;
    let hash = '';
    if ((entry.sha256 === undefined) === (entry.key_env === undefined)) {
      problems.push(`${where}: give exactly one of sha256 or key_env`);
    } else if (entry.sha256 !== undefined) {
      hash = entry.sha256.toLowerCase();
    } else if (entry.key_env !== undefined) {
      const value = own(env, entry.key_env)?.trim();
      if (value) {
        hash = sha256Hex(value);
      } else {
        problems.push(`${where}.key_env: ${entry.key_env} is not set`);
      }
    }
    if (hash !== '') {
      const first = seen.get(hash);
      if (first !== undefined) {
        problems.push(`${where}: the same key as keys[${first}]`);
      }
      seen.set(hash, i);
    }
    return {
      hash,
      name: entry.name,
      keyEnv: entry.key_env,
      limits: toOverrides(entry.limits),
      models: modelLimits(entry.models, `${where}.models`, problems),
      admin: entry.admin === true,
    };
  });
  if (problems.length > 0) {
    return fail(problems);
  }
  return { defaults: toOverrides(file.defaults), models, keys };
}

/** Reads and validates the keys file at `path`. */
export function loadKeysFile(path: string, env: NodeJS.ProcessEnv = process.env): KeysFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigValidationError([
      `GATEWAY_KEYS_FILE ${path}: cannot read the file: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
    ]);
  }
  return parseKeysFile(text, env, path);
}
