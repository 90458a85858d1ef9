import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { parse } from 'yaml';
import { startGateway } from './gateway';

/** What the deployment suites (Kubernetes, Docker, compose) check the files against. */

export const ROOT = join(__dirname, '..', '..');
export const read = (...parts: string[]): string => readFileSync(join(ROOT, ...parts), 'utf8');

/**
 * Variables read by modules still being built. Each joins the config schema (an @Expose()
 * property of a src/config/*.config.ts class) with its module, and leaves this list then.
 */
export const PENDING_ENV_NAMES: string[] = [];

export type Obj = Record<string, any>;

export interface Schema {
  /** Every variable the code reads. */
  names: Set<string>;
  /** Defaults of the schema properties that have one. */
  defaults: Map<string, unknown>;
}

/** The @Expose() properties of every schema class, read exactly as the app reads them. */
export async function readSchema(): Promise<Schema> {
  const names = new Set<string>(PENDING_ENV_NAMES);
  const defaults = new Map<string, unknown>();
  const dir = join(ROOT, 'src', 'config');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.config.ts'))
    .map((f) => join(dir, f));
  for (const file of files) {
    const mod: Obj = await import(file);
    for (const value of Object.values(mod)) {
      if (
        typeof value !== 'function' ||
        !/^class\b/.test(Function.prototype.toString.call(value))
      ) {
        continue;
      }
      const instance = plainToInstance(
        value as new () => object,
        {},
        {
          excludeExtraneousValues: true,
          exposeDefaultValues: true,
        },
      ) as Obj;
      const keys = Object.keys(instance);
      if (keys.length === 0 || !keys.every((k) => /^[A-Z][A-Z0-9_]*$/.test(k))) {
        continue; // not an environment schema
      }
      for (const k of keys) {
        names.add(k);
        if (instance[k] !== undefined) {
          defaults.set(k, instance[k]);
        }
      }
    }
  }
  // Provider variables named by the shipped catalog.
  for (const n of catalogKeyEnvNames()) {
    names.add(n);
  }
  return { names, defaults };
}

export function catalogKeyEnvNames(): string[] {
  const catalog = parse(read('config', 'catalog.yaml')) as Obj;
  return (catalog.providers as Obj[])
    .flatMap((p) => [p.api_key_env, p.base_url_env])
    .filter((n): n is string => typeof n === 'string');
}

/** GET each path on the real app; returns path -> status. */
export async function servedStatuses(paths: string[]): Promise<Record<string, number>> {
  const gw = await startGateway({ CATALOG_PATH: join(ROOT, 'config', 'catalog.yaml') });
  try {
    const out: Record<string, number> = {};
    for (const path of paths) {
      out[path] = (await fetch(gw.origin + path)).status;
    }
    return out;
  } finally {
    await gw.close();
  }
}

export function ms(value: unknown): number {
  const n = Number(value);
  if (!Number.isFinite(n)) {
    throw new Error(`not a number of milliseconds: ${String(value)}`);
  }
  return n;
}
