import { InvalidRequestError } from '../../common/errors/gateway-errors';
import { isRecord } from '../../limits/extractors/read';
import type { PartSource } from './prompt-injection/detector';

export type InjectionAction = 'block' | 'flag';

export interface InjectionSettings {
  action: InjectionAction;
  threshold: number;
  /** Which part sources are scanned. */
  sources: PartSource[];
}

const SCAN_VALUES: Record<string, PartSource> = {
  user: 'user',
  tool_results: 'tool_result',
  documents: 'document',
};
const SETTINGS = ['action', 'threshold', 'scan'] as const;

export function defaultInjectionSettings(threshold: number): InjectionSettings {
  return { action: 'block', threshold, sources: ['user', 'tool_result', 'document'] };
}

function invalid(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': ${message}`,
    param,
    'invalid_protection_settings',
  );
}

function parseScan(value: unknown, param: string): PartSource[] {
  const items =
    typeof value === 'string'
      ? value.split(',').map((s) => s.trim())
      : Array.isArray(value)
        ? value
        : undefined;
  const allowed = Object.keys(SCAN_VALUES).join(', ');
  if (items === undefined || items.length === 0) {
    throw invalid(param, `expected a non-empty array or comma-separated string of ${allowed}.`);
  }
  const sources = new Set<PartSource>();
  for (const item of items) {
    const source = typeof item === 'string' ? SCAN_VALUES[item] : undefined;
    if (source === undefined) {
      throw invalid(param, `unknown part ${JSON.stringify(item)}; expected ${allowed}.`);
    }
    sources.add(source);
  }
  return [...sources];
}

/**
 * Reads the settings of a `prompt_injection_protection` tool from its parameter schema:
 * each property's `const` (or else `default`) is the value; a property without either keeps
 * the default. `schemaParam` is the schema's path, used to name a bad setting in the 400.
 */
export function parseInjectionSettings(
  schema: unknown,
  schemaParam: string,
  defaults: InjectionSettings,
): InjectionSettings {
  const settings: InjectionSettings = { ...defaults, sources: [...defaults.sources] };
  if (schema === undefined || schema === null) {
    return settings;
  }
  if (!isRecord(schema)) {
    throw invalid(schemaParam, 'expected a JSON schema object.');
  }
  const properties = schema.properties;
  if (properties === undefined || properties === null) {
    return settings;
  }
  if (!isRecord(properties)) {
    throw invalid(`${schemaParam}.properties`, 'expected an object of settings.');
  }
  for (const [key, property] of Object.entries(properties)) {
    const param = `${schemaParam}.properties.${key}`;
    if (!(SETTINGS as readonly string[]).includes(key)) {
      throw invalid(
        param,
        `unknown setting '${key}' for prompt_injection_protection; expected ${SETTINGS.join(', ')}.`,
      );
    }
    if (!isRecord(property)) {
      throw invalid(param, 'expected a schema object with a "default" or "const".');
    }
    const value = 'const' in property ? property.const : property.default;
    if (value === undefined) {
      continue;
    }
    if (key === 'action') {
      if (value !== 'block' && value !== 'flag') {
        throw invalid(param, `expected "block" or "flag", got ${JSON.stringify(value)}.`);
      }
      settings.action = value;
    } else if (key === 'threshold') {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
        throw invalid(param, `expected a number between 0 and 1, got ${JSON.stringify(value)}.`);
      }
      settings.threshold = value;
    } else {
      settings.sources = parseScan(value, param);
    }
  }
  return settings;
}
