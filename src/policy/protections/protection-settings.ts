import { InvalidRequestError } from '../../common/errors/gateway-errors';
import { isRecord } from '../../common/json-read';

/** A setting's value as the tool's schema gave it, with the path to name it in a 400. */
export interface RawSetting {
  value: unknown;
  /** `tools[2].function.parameters.properties.action` */
  param: string;
}

/** The 400 for a protection setting the gateway cannot use. */
export function invalidSetting(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': ${message}`,
    param,
    'invalid_protection_settings',
  );
}

/**
 * Reads a protection tool's settings from its parameter schema: each property's `const`
 * (or else `default`) is its value; a property with neither is left out (the default
 * applies). A property not in `allowed` is a 400 naming it. Values are not checked here:
 * each protection validates its own, with {@link invalidSetting}.
 */
export function readSettings(
  schema: unknown,
  schemaParam: string,
  tool: string,
  allowed: readonly string[],
): Map<string, RawSetting> {
  const settings = new Map<string, RawSetting>();
  if (schema === undefined || schema === null) {
    return settings;
  }
  if (!isRecord(schema)) {
    throw invalidSetting(schemaParam, 'expected a JSON schema object.');
  }
  const properties = schema.properties;
  if (properties === undefined || properties === null) {
    return settings;
  }
  if (!isRecord(properties)) {
    throw invalidSetting(`${schemaParam}.properties`, 'expected an object of settings.');
  }
  for (const [key, property] of Object.entries(properties)) {
    const param = `${schemaParam}.properties.${key}`;
    if (!allowed.includes(key)) {
      throw invalidSetting(
        param,
        `unknown setting '${key}' for ${tool}; expected ${allowed.join(', ')}.`,
      );
    }
    if (!isRecord(property)) {
      throw invalidSetting(param, 'expected a schema object with a "default" or "const".');
    }
    const value = 'const' in property ? property.const : property.default;
    if (value !== undefined) {
      settings.set(key, { value, param });
    }
  }
  return settings;
}

/** A setting that must be one of `choices`. */
export function choiceSetting<T extends string>(setting: RawSetting, choices: readonly T[]): T {
  if (
    typeof setting.value !== 'string' ||
    !(choices as readonly string[]).includes(setting.value)
  ) {
    throw invalidSetting(
      setting.param,
      `expected ${choices.map((c) => JSON.stringify(c)).join(' or ')}, got ${JSON.stringify(setting.value)}.`,
    );
  }
  return setting.value as T;
}

/** A finite number setting within [min, max] (an integer when `integer`). */
export function numberSetting(
  setting: RawSetting,
  min: number,
  max: number,
  integer = false,
): number {
  const value = setting.value;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < min ||
    value > max ||
    (integer && !Number.isInteger(value))
  ) {
    throw invalidSetting(
      setting.param,
      `expected ${integer ? 'an integer' : 'a number'} between ${min} and ${max}, got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/** A non-empty string setting (a catalog model id, say). */
export function stringSetting(setting: RawSetting, maxLength = 256): string {
  const value = setting.value;
  if (typeof value !== 'string' || value.trim() === '' || value.length > maxLength) {
    throw invalidSetting(
      setting.param,
      `expected a non-empty string of at most ${maxLength} characters, got ${JSON.stringify(value)}.`,
    );
  }
  return value.trim();
}
