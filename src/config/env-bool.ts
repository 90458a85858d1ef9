import { Transform } from 'class-transformer';
import { IsBoolean } from 'class-validator';

/** The spellings every boolean variable accepts, in the order the docs and errors list them. */
export const ENV_BOOL_WORDS = 'true/false, 1/0, yes/no or on/off';

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * A boolean environment value: true/false, 1/0, yes/no, on/off, any letter case, spaces
 * around ignored. Undefined for anything else, which the caller must refuse rather than
 * guess (`CONSOLE_ENABLED=disabled` must not mean on).
 */
export function parseEnvBool(raw: string): boolean | undefined {
  const word = raw.trim().toLowerCase();
  return TRUE.has(word) ? true : FALSE.has(word) ? false : undefined;
}

/**
 * Decorates a boolean property of an environment schema class: the accepted spellings
 * become a boolean, unset or empty keeps the property's default, and anything else is a
 * validation problem naming the variable, so the boot stops with it listed.
 */
export function EnvBool(): PropertyDecorator {
  return (target: object, key: string | symbol): void => {
    let fallback: unknown;
    // The field's initializer is the default; schema classes take no constructor arguments.
    const defaultValue = (): unknown =>
      (fallback ??= Reflect.get(new (target.constructor as new () => object)(), key));
    Transform(({ value }: { value: unknown }) => {
      if (typeof value !== 'string') {
        return value;
      }
      if (value.trim() === '') {
        return defaultValue(); // blank is unset, as empty is
      }
      // null, not the raw string: implicit conversion would turn any string into `true`.
      return parseEnvBool(value) ?? null;
    })(target, key);
    IsBoolean({ message: ({ property }) => `${property} must be one of ${ENV_BOOL_WORDS}` })(
      target,
      key,
    );
  };
}
