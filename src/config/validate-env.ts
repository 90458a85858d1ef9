import { ClassConstructor, plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { setOwn } from '../common/own';
import { validationProblems } from '../common/validation/validation-problems';

/** Unset and empty variables both mean "use the default". */
function nonEmpty(env: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') {
      setOwn(out, key, value);
    }
  }
  return out;
}

const TRANSFORM = {
  enableImplicitConversion: true,
  excludeExtraneousValues: true,
  exposeDefaultValues: true,
} as const;

/**
 * Validates the environment against one schema class per config namespace and returns
 * every problem found, so that a bad deployment is fixed in one round instead of many.
 */
export function collectEnvProblems(
  schemas: ClassConstructor<object>[],
  env: Record<string, unknown>,
): string[] {
  const problems: string[] = [];
  for (const schema of schemas) {
    const instance = plainToInstance(schema, nonEmpty(env), TRANSFORM);
    validationProblems(validateSync(instance, { skipMissingProperties: false }), '', problems);
  }
  return problems;
}

/** Builds a typed namespace value from the environment through its schema class. */
export function readNamespace<T extends object>(
  schema: ClassConstructor<T>,
  env: NodeJS.ProcessEnv = process.env,
): T {
  return plainToInstance(schema, nonEmpty(env), TRANSFORM);
}
