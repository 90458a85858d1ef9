import { spawnSync } from 'node:child_process';
import dockerignore from '@balena/dockerignore';
import { parse } from 'yaml';
import {
  catalogKeyEnvNames,
  ms,
  type Obj,
  read,
  readSchema,
  ROOT,
  servedStatuses,
} from './support/deploy';

/**
 * The Dockerfile, its build context (.dockerignore) and docker-compose, checked against the
 * code. No Docker engine is needed.
 */

/** Compose durations: `40s`, `1m30s`, `500ms`. */
function composeDurationMs(value: string): number {
  let total = 0;
  for (const [, n, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    total +=
      Number(n) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
  }
  return total;
}

/** Every instruction of the Dockerfile, continuation lines joined, comments dropped. */
function dockerInstructions(text: string): string[] {
  return text
    .replace(/\\\r?\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/**
 * The build-context sources of each COPY/ADD (not `--from` a stage): flags dropped, exec
 * (JSON) form read too, the destination left out.
 */
function contextSources(instructions: string[]): string[] {
  const out: string[] = [];
  for (const line of instructions) {
    const m = /^(COPY|ADD)\s+(.*)$/i.exec(line);
    if (m === null) {
      continue;
    }
    let args = m[2].trim();
    const flags: string[] = [];
    while (args.startsWith('--')) {
      const [flag, ...rest] = args.split(/\s+/);
      flags.push(flag);
      args = rest.join(' ');
    }
    if (flags.some((f) => f.startsWith('--from='))) {
      continue;
    }
    const words = args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/);
    out.push(...words.slice(0, -1));
  }
  return out;
}

/** Files git tracks under a path of the repository (what a clean checkout's context holds). */
function trackedUnder(path: string): string[] {
  const r = spawnSync('git', ['ls-files', '-z', '--', path], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`git ls-files ${path} failed: ${r.stderr}`);
  }
  return r.stdout.split('\0').filter(Boolean);
}

describe('Dockerfile build context (.dockerignore)', () => {
  const ignore = dockerignore().add(read('.dockerignore').split(/\r?\n/));

  it('matches .dockerignore patterns as Docker does: anchored, `**`, `!` exceptions', () => {
    // Docker semantics, unlike .gitignore: a bare name is anchored at the context root, and
    // an exception re-includes a file inside an excluded folder.
    const rules = dockerignore().add(['docs', '!docs/keep.yaml', '**/*.tmp', 'a/*/c']);
    expect(rules.ignores('docs/console.png')).toBe(true);
    expect(rules.ignores('docs/keep.yaml')).toBe(false);
    expect(rules.ignores('src/docs/x.ts')).toBe(false);
    expect(rules.ignores('x.tmp')).toBe(true);
    expect(rules.ignores('deep/er/x.tmp')).toBe(true);
    expect(rules.ignores('a/b/c')).toBe(true);
    expect(rules.ignores('a/b/d/c')).toBe(false);
  });

  it('excludes none of the files any COPY takes from the context', () => {
    const sources = contextSources(dockerInstructions(read('Dockerfile')));
    // The check read the Dockerfile, not nothing.
    expect(sources).toEqual(expect.arrayContaining(['package.json', 'src', 'config', 'models']));
    for (const source of sources) {
      const files = trackedUnder(source.replace(/^\.\//, '').replace(/\/$/, ''));
      // A source with no file in the context fails the build ("not found").
      expect({ source, files: files.length > 0 }).toEqual({ source, files: true });
      const excluded = files.filter((f) => ignore.ignores(f));
      expect({ source, excluded }).toEqual({ source, excluded: [] });
    }
  });

  it('keeps tests, docs prose and local data out of the context', () => {
    for (const path of ['test/deploy.e2e-spec.ts', 'docs/console.png', 'node_modules/x', '.env']) {
      expect({ path, ignored: ignore.ignores(path) }).toEqual({ path, ignored: true });
    }
  });
});

describe('Dockerfile', () => {
  const lines = read('Dockerfile')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const runtime = lines.slice(lines.map((l) => /^FROM\s/i.test(l)).lastIndexOf(true));
  const instruction = (name: string): string[] =>
    runtime
      .filter((l) => l.toUpperCase().startsWith(`${name} `))
      .map((l) => l.slice(name.length + 1).trim());

  it('is multi-stage and runs the final stage as the non-root node user', () => {
    expect(lines.filter((l) => /^FROM\s/i.test(l)).length).toBeGreaterThan(1);
    expect(instruction('USER').at(-1)).toBe('node');
  });

  it('starts the server exactly as `npm start` execs it, in exec form', () => {
    const cmd = JSON.parse(instruction('CMD').at(-1) ?? 'null') as unknown;
    const start = (JSON.parse(read('package.json')) as Obj).scripts.start as string;
    expect(start).toMatch(/^exec /);
    expect(cmd).toEqual(start.replace(/^exec /, '').split(/\s+/));
  });

  it('ships what the code loads at run time, and only schema variables', async () => {
    const copied = instruction('COPY').map((c) => c.split(/\s+/).at(-1));
    // config/: the catalog; models/: the prompt-injection weights (found above dist/).
    expect(copied).toEqual(
      expect.arrayContaining(['./node_modules', './dist', './config', './models']),
    );
    const { names } = await readSchema();
    const envNames = instruction('ENV').flatMap((e) => [...e.matchAll(/(\w+)=/g)].map((m) => m[1]));
    expect(envNames.filter((n) => !names.has(n))).toEqual([]);
  });

  it('health-checks the readiness route, which the app serves', async () => {
    const check = instruction('HEALTHCHECK').at(-1) ?? '';
    const path = /\/health[\w/]*/.exec(check)?.[0];
    expect(path).toBe('/health/ready');
    expect(await servedStatuses([path!])).toEqual({ [path!]: 200 });
  });
});

describe('docker-compose', () => {
  const compose = parse(read('docker-compose.yml')) as Obj;
  const local = parse(read('docker-compose.local.yml')) as Obj;
  const gateways = Object.keys(compose.services as Obj).filter((s) => s.startsWith('gateway-'));

  it('runs two gateways beside Redis, PostgreSQL and nginx', () => {
    expect(gateways).toEqual(['gateway-1', 'gateway-2']);
    expect(Object.keys(compose.services as Obj)).toEqual(
      expect.arrayContaining(['redis', 'postgres', 'lb']),
    );
  });

  it('points every gateway at the compose Redis and PostgreSQL, with schema variables only', async () => {
    const { names } = await readSchema();
    for (const g of gateways) {
      const svc = compose.services[g] as Obj;
      const env = svc.environment as Obj;
      expect({ g, unknown: Object.keys(env).filter((n) => !names.has(n)) }).toEqual({
        g,
        unknown: [],
      });
      expect(new URL(String(env.REDIS_URL)).hostname).toBe('redis');
      expect(new URL(String(env.DATABASE_URL).replace(/\$\{[^}]*\}/g, 'x')).hostname).toBe(
        'postgres',
      );
      expect(Object.keys(svc.depends_on as Obj)).toEqual(
        expect.arrayContaining(['redis', 'postgres']),
      );
      const graceMs = composeDurationMs(String(svc.stop_grace_period ?? '10s'));
      expect(graceMs).toBeGreaterThan(
        ms(env.SHUTDOWN_DRAIN_DELAY_MS ?? 5000) + ms(env.SHUTDOWN_TIMEOUT_MS ?? 30000),
      );
    }
  });

  it('balances nginx over the gateway services on their PORT', () => {
    const servers = [...read('config', 'nginx.conf').matchAll(/server\s+([\w-]+):(\d+);/g)];
    expect(servers.map((m) => m[1])).toEqual(gateways);
    for (const [, host, port] of servers) {
      expect(port).toBe(String(compose.services[host].environment.PORT));
    }
  });

  it('gives both replicas one console session secret and one database, from the environment', () => {
    const env = (g: string): Obj => compose.services[g].environment as Obj;
    for (const name of ['CONSOLE_SESSION_SECRET', 'DATABASE_URL']) {
      const values = new Set(gateways.map((g) => env(g)[name] as unknown));
      expect({ name, distinct: values.size }).toEqual({ name, distinct: 1 });
    }
    // Required from the shell or .env (compose stops with the message), never a default.
    expect(String(env(gateways[0]).CONSOLE_SESSION_SECRET)).toMatch(
      /^\$\{CONSOLE_SESSION_SECRET:\?[^}]*openssl rand[^}]*\}$/,
    );
    expect(local.services?.['gateway-1']?.environment?.CONSOLE_SESSION_SECRET).toBeUndefined();
  });

  it('has a local-models override that blanks every provider key and URL', () => {
    for (const g of gateways) {
      const env = (local.services?.[g]?.environment ?? {}) as Obj;
      for (const n of catalogKeyEnvNames()) {
        expect({ g, n, value: env[n] }).toEqual({ g, n, value: '' });
      }
    }
  });
});
