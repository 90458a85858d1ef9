import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigValidationError, validateEnvironment } from '../src/config';
import {
  type Obj,
  read,
  readSchema,
  ROOT,
  type Schema,
  servedStatuses,
  ms,
} from './support/deploy';

/**
 * The Kustomize manifests checked against the code, rendered with `kubectl kustomize`
 * (the Dockerfile and docker-compose: docker.e2e-spec.ts). Nothing here needs a cluster;
 * without kubectl the manifest checks skip loudly (and fail when CI is set).
 */

const K8S = join(ROOT, 'deploy', 'k8s');

// ---------------------------------------------------------------------------------------
// Kubernetes manifests

const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
const hasKubectl = kubectl.status === 0;

function kustomize(dir: string): Obj[] {
  const r = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) {
    throw new Error(`kubectl kustomize ${dir} failed:\n${r.stderr}`);
  }
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
}

/** Each overlay, the base, and each component applied on top of the base. */
function renderAll(): Map<string, Obj[]> {
  const out = new Map<string, Obj[]>();
  out.set('base', kustomize(join(K8S, 'base')));
  for (const o of readdirSync(join(K8S, 'overlays'))) {
    out.set(`overlays/${o}`, kustomize(join(K8S, 'overlays', o)));
  }
  for (const c of readdirSync(join(K8S, 'components'))) {
    // kustomize wants relative paths to other kustomizations.
    const tmp = mkdtempSync(join(tmpdir(), 'gw-kustomize-'));
    try {
      const rel = (p: string): string => relative(tmp, p).split('\\').join(posix.sep);
      writeFileSync(
        join(tmp, 'kustomization.yaml'),
        `resources:\n  - ${rel(join(K8S, 'base'))}\ncomponents:\n  - ${rel(join(K8S, 'components', c))}\n`,
      );
      out.set(`base+components/${c}`, kustomize(tmp));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return out;
}

const find = (docs: Obj[], kind: string, name: string): Obj | undefined =>
  docs.find((d) => d.kind === kind && d.metadata?.name === name);

const matches = (selector: Obj | undefined, labels: Obj): boolean =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The container's environment as the pod sees it: schema defaults, envFrom, then env. */
function resolveEnv(
  docs: Obj[],
  container: Obj,
  schema: Schema,
): { names: string[]; values: Map<string, unknown> } {
  const names: string[] = [];
  const values = new Map<string, unknown>(schema.defaults);
  for (const from of (container.envFrom ?? []) as Obj[]) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    const source = find(docs, kind, ref.name);
    // An envFrom source outside the rendering would hide its names from this check: read
    // external Secrets key by key (env + secretKeyRef) instead.
    expect({ envFrom: `${kind}/${ref.name}`, rendered: source !== undefined }).toEqual({
      envFrom: `${kind}/${ref.name}`,
      rendered: true,
    });
    for (const [k, v] of Object.entries((source?.data ?? {}) as Obj)) {
      names.push(k);
      values.set(k, kind === 'Secret' ? Buffer.from(String(v), 'base64').toString() : v);
    }
  }
  for (const e of (container.env ?? []) as Obj[]) {
    names.push(e.name);
    if (e.value !== undefined) {
      values.set(e.name, e.value);
    } else {
      values.delete(e.name); // from a Secret: unknown here
    }
  }
  return { names, values };
}

/** The keys of deploy/k8s/secrets.env.example: what an operator's external Secret holds. */
function secretsExample(): Map<string, string> {
  return new Map(
    read('deploy', 'k8s', 'secrets.env.example')
      .split('\n')
      .filter((l) => /^[A-Z]/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
  );
}

/**
 * The variables a pod starts with, as strings: ConfigMaps and rendered Secrets as
 * rendered, a Secret outside the rendering as documented in secrets.env.example (empty
 * placeholders stay unset, as an optional key the Secret lacks would).
 */
function podEnv(docs: Obj[], container: Obj): Record<string, string> {
  const example = secretsExample();
  const out: Record<string, string> = {};
  const decode = (v: unknown): string => Buffer.from(String(v), 'base64').toString();
  for (const from of (container.envFrom ?? []) as Obj[]) {
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    const source = find(docs, kind, (from.configMapRef ?? from.secretRef).name);
    for (const [k, v] of Object.entries((source?.data ?? {}) as Obj)) {
      out[k] = kind === 'Secret' ? decode(v) : String(v);
    }
  }
  for (const e of (container.env ?? []) as Obj[]) {
    const ref = e.valueFrom?.secretKeyRef as Obj | undefined;
    if (ref === undefined) {
      out[e.name] = String(e.value ?? '');
      continue;
    }
    const rendered = find(docs, 'Secret', ref.name);
    const value = rendered ? rendered.data?.[ref.key] : example.get(ref.key);
    if (value !== undefined && value !== '') {
      out[e.name] = rendered ? decode(value) : String(value);
    }
  }
  return out;
}

/** The problems the gateway's own boot validation finds in an environment. */
function configProblems(env: Record<string, string>): string[] {
  try {
    validateEnvironment(env);
    return [];
  } catch (e) {
    if (e instanceof ConfigValidationError) {
      return e.problems;
    }
    throw e;
  }
}

function portNumber(container: Obj, port: string | number): number | undefined {
  if (typeof port === 'number') {
    return (container.ports as Obj[]).some((p) => p.containerPort === port) ? port : undefined;
  }
  return (container.ports as Obj[]).find((p) => p.name === port)?.containerPort;
}

const describeK8s = hasKubectl ? describe : describe.skip;
if (!hasKubectl) {
  const message = 'kubectl not found: the deploy/k8s manifests are NOT checked (install kubectl).';
  if (process.env.CI) {
    describe('deployment manifests', () => {
      it('has kubectl to render them with (required when CI is set)', () => {
        throw new Error(message);
      });
    });
  } else {
    console.warn(`\n\n!!!!!!!!!! SKIPPED: ${message} !!!!!!!!!!\n`);
  }
}

describeK8s('deployment manifests (deploy/k8s, rendered with kubectl kustomize)', () => {
  let schema: Schema;
  let renders: Map<string, Obj[]>;
  const each = (fn: (name: string, docs: Obj[], deployment: Obj, container: Obj) => void) => {
    for (const [name, docs] of renders) {
      const deployments = docs.filter((d) => d.kind === 'Deployment');
      expect({ name, deployments: deployments.length }).toEqual({ name, deployments: 1 });
      const deployment = deployments[0];
      const container = (deployment.spec.template.spec.containers as Obj[]).find(
        (c) => c.name === 'gateway',
      );
      expect(container).toBeDefined();
      fn(name, docs, deployment, container!);
    }
  };

  beforeAll(async () => {
    schema = await readSchema();
    renders = renderAll();
  });

  it('renders the base, both overlays and the ServiceMonitor component', () => {
    expect([...renders.keys()]).toEqual(
      expect.arrayContaining([
        'base',
        'overlays/production',
        'overlays/local-models',
        'base+components/servicemonitor',
      ]),
    );
  });

  it('sets only variables the code reads', () => {
    // The schema itself was read, not an empty set.
    expect([...schema.names]).toEqual(
      expect.arrayContaining(['PORT', 'SHUTDOWN_TIMEOUT_MS', 'SHUTDOWN_DRAIN_DELAY_MS']),
    );
    each((name, docs, _d, container) => {
      const unknown = resolveEnv(docs, container, schema).names.filter((n) => !schema.names.has(n));
      expect({ name, unknown }).toEqual({ name, unknown: [] });
    });
  });

  it('probes the health routes on the port the app listens on (PORT), on all interfaces', () => {
    each((name, docs, deployment, container) => {
      const { values } = resolveEnv(docs, container, schema);
      const port = Number(values.get('PORT'));
      expect({ name, host: values.get('HOST') }).toEqual({ name, host: '0.0.0.0' });
      expect({ name, readiness: container.readinessProbe?.httpGet?.path }).toEqual({
        name,
        readiness: '/health/ready', // the route that turns 503 while draining
      });
      expect({ name, liveness: container.livenessProbe?.httpGet?.path }).toEqual({
        name,
        liveness: '/health', // stays 200 while draining
      });
      for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
        const get = container[probe]?.httpGet as Obj | undefined;
        if (get === undefined) {
          continue;
        }
        expect({ name, probe, port: portNumber(container, get.port) }).toEqual({
          name,
          probe,
          port,
        });
      }
      // The Service reaches the same port and selects the gateway's pods.
      const labels = deployment.spec.template.metadata.labels as Obj;
      const service = docs.find((d) => d.kind === 'Service')!;
      expect(matches(service.spec.selector, labels)).toBe(true);
      for (const p of service.spec.ports as Obj[]) {
        expect({ name, target: portNumber(container, p.targetPort) }).toEqual({
          name,
          target: port,
        });
      }
    });
  });

  it('probes routes the app really serves (200 from the real app)', async () => {
    const paths = new Set<string>();
    each((_n, _docs, _d, container) => {
      for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
        const path = container[probe]?.httpGet?.path as string | undefined;
        if (path !== undefined) {
          paths.add(path);
        }
      }
    });
    const statuses = await servedStatuses([...paths]);
    expect(statuses).toEqual(Object.fromEntries([...paths].map((p) => [p, 200])));
  });

  it('gives a stopping pod longer than the drain delay plus the shutdown timeout', () => {
    each((name, docs, deployment, container) => {
      const { values } = resolveEnv(docs, container, schema);
      const drainMs = ms(values.get('SHUTDOWN_DRAIN_DELAY_MS'));
      const timeoutMs = ms(values.get('SHUTDOWN_TIMEOUT_MS'));
      const graceMs = 1000 * ms(deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30);
      expect({ name, graceMs, exceeds: graceMs > drainMs + timeoutMs }).toEqual({
        name,
        graceMs,
        exceeds: true,
      });
      // Readiness notices the 503 within the drain delay (Kubernetes defaults: 10 s x 3).
      const r = container.readinessProbe as Obj;
      const noticeMs = 1000 * (r.periodSeconds ?? 10) * (r.failureThreshold ?? 3);
      expect({ name, noticeMs, withinDrain: noticeMs <= drainMs }).toEqual({
        name,
        noticeMs,
        withinDrain: true,
      });
      // No preStop hook: it would delay SIGTERM and eat into the grace period unseen here.
      expect(container.lifecycle?.preStop).toBeUndefined();
    });
  });

  it('runs as non-root with a read-only root filesystem, writing only to emptyDirs', () => {
    each((name, docs, deployment, container) => {
      const pod = deployment.spec.template.spec as Obj;
      const psc = (pod.securityContext ?? {}) as Obj;
      const csc = (container.securityContext ?? {}) as Obj;
      const runAsUser = csc.runAsUser ?? psc.runAsUser;
      expect({
        name,
        runAsNonRoot: csc.runAsNonRoot ?? psc.runAsNonRoot,
        // `USER node` is a name: the kubelet needs a uid to verify runAsNonRoot.
        numericNonRootUser: typeof runAsUser === 'number' && runAsUser > 0,
        readOnlyRootFilesystem: csc.readOnlyRootFilesystem,
        allowPrivilegeEscalation: csc.allowPrivilegeEscalation,
        dropsAll: ((csc.capabilities?.drop ?? []) as string[]).includes('ALL'),
        adds: csc.capabilities?.add,
      }).toEqual({
        name,
        runAsNonRoot: true,
        numericNonRootUser: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        dropsAll: true,
        adds: undefined,
      });
      const volumes = new Map(((pod.volumes ?? []) as Obj[]).map((v) => [v.name, v]));
      const mounts = (container.volumeMounts ?? []) as Obj[];
      const writable = mounts.filter((m) => m.readOnly !== true);
      for (const m of writable) {
        expect({
          name,
          mount: m.mountPath,
          emptyDir: volumes.get(m.name)?.emptyDir !== undefined,
        }).toEqual({ name, mount: m.mountPath, emptyDir: true });
      }
      const { values } = resolveEnv(docs, container, schema);
      const under = (path: string, among: Obj[]): Obj | undefined =>
        among.find((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));
      expect({ name, tmpWritable: under('/tmp', writable) !== undefined }).toEqual({
        name,
        tmpWritable: true,
      });
      const dataDir = values.get('DATA_DIR') as string | undefined;
      if (dataDir !== undefined) {
        expect({ name, dataDir, writable: under(dataDir, writable) !== undefined }).toEqual({
          name,
          dataDir,
          writable: true,
        });
      }
      // CATALOG_PATH is a file of a mounted ConfigMap holding config/catalog.yaml.
      const catalogPath = String(values.get('CATALOG_PATH'));
      const mount = under(catalogPath, mounts);
      expect({ name, catalogPath, mounted: mount !== undefined }).toEqual({
        name,
        catalogPath,
        mounted: true,
      });
      const cmName = volumes.get(mount!.name)?.configMap?.name as string;
      const file = catalogPath.slice(mount!.mountPath.length + 1);
      const content = find(docs, 'ConfigMap', cmName)?.data?.[file];
      expect({ name, sameAsConfigCatalog: content === read('config', 'catalog.yaml') }).toEqual({
        name,
        // If not: cp config/catalog.yaml deploy/k8s/base/catalog.yaml
        sameAsConfigCatalog: true,
      });
    });
  });

  it('keeps the pods available and scaled: PDB and HPA target the gateway', () => {
    each((name, docs, deployment) => {
      const labels = deployment.spec.template.metadata.labels as Obj;
      const pdb = docs.find((d) => d.kind === 'PodDisruptionBudget');
      expect({ name, pdbSelectsPods: matches(pdb?.spec.selector?.matchLabels, labels) }).toEqual({
        name,
        pdbSelectsPods: true,
      });
      for (const hpa of docs.filter((d) => d.kind === 'HorizontalPodAutoscaler')) {
        expect(hpa.spec.scaleTargetRef).toMatchObject({
          kind: 'Deployment',
          name: deployment.metadata.name,
        });
        // A fixed replica count would fight the autoscaler on every apply.
        expect({ name, replicas: deployment.spec.replicas }).toEqual({ name, replicas: undefined });
      }
      for (const r of ['requests', 'limits']) {
        expect(deployment.spec.template.spec.containers[0].resources?.[r]?.memory).toBeDefined();
      }
    });
  });

  it('applies without the Prometheus operator CRDs except through the component', () => {
    for (const [name, docs] of renders) {
      const crdKinds = docs
        .filter((d) => String(d.apiVersion).startsWith('monitoring.coreos.com/'))
        .map((d) => d.kind as string);
      expect({ name, crdKinds }).toEqual({
        name,
        crdKinds: name.startsWith('base+components/servicemonitor') ? ['ServiceMonitor'] : [],
      });
    }
  });

  it('scrapes the Service port with the token the gateway reads', () => {
    const docs = renders.get('base+components/servicemonitor')!;
    const monitor = find(docs, 'ServiceMonitor', 'gateway')!;
    const service = docs.find((d) => d.kind === 'Service')!;
    expect(matches(monitor.spec.selector.matchLabels, service.metadata.labels)).toBe(true);
    const endpoint = monitor.spec.endpoints[0] as Obj;
    expect((service.spec.ports as Obj[]).map((p) => p.name)).toContain(endpoint.port);
    const container = find(docs, 'Deployment', 'gateway')!.spec.template.spec.containers[0];
    const tokenRef = ((container.env ?? []) as Obj[]).find((e) => e.name === 'METRICS_TOKEN')
      ?.valueFrom?.secretKeyRef;
    expect(endpoint.authorization.credentials).toEqual({
      name: tokenRef.name,
      key: tokenRef.key,
    });
  });

  it('gives every replica the one console session secret, from a Secret', () => {
    each((name, docs, _d, container) => {
      const entries = ((container.env ?? []) as Obj[]).filter(
        (e) => e.name === 'CONSOLE_SESSION_SECRET',
      );
      // One reference in the pod template: every replica reads the same Secret key, so a
      // session signed by one pod opens on the others. Never a literal in a ConfigMap.
      expect({ name, entries: entries.length }).toEqual({ name, entries: 1 });
      const ref = entries[0].valueFrom?.secretKeyRef as Obj | undefined;
      expect({ name, ref }).toEqual({
        name,
        ref: expect.objectContaining({
          name: expect.stringMatching(/^gateway-secrets(-[a-z0-9]+)?$/),
          key: 'CONSOLE_SESSION_SECRET',
        }),
      });
      const { values } = resolveEnv(docs, container, schema);
      expect({ name, literal: values.get('CONSOLE_SESSION_SECRET') }).toEqual({
        name,
        literal: undefined,
      });
    });
  });

  it('shares PostgreSQL between replicas: DATABASE_URL from the Secret, no embedded fallback', () => {
    let multi = 0;
    each((name, docs, deployment, container) => {
      const hpa = docs.find((d) => d.kind === 'HorizontalPodAutoscaler');
      const replicas = Math.max(deployment.spec.replicas ?? 1, hpa?.spec.maxReplicas ?? 0);
      if (replicas <= 1) {
        return;
      }
      multi++;
      const ref = ((container.env ?? []) as Obj[]).find((e) => e.name === 'DATABASE_URL')?.valueFrom
        ?.secretKeyRef as Obj | undefined;
      expect({ name, replicas, databaseUrlKey: ref?.key }).toEqual({
        name,
        replicas,
        databaseUrlKey: 'DATABASE_URL',
      });
      // With DATA_DIR set, a pod whose Secret lacks DATABASE_URL would start on its own
      // embedded database; unset, it refuses to start and says why.
      expect({ name, dataDir: resolveEnv(docs, container, schema).values.get('DATA_DIR') }).toEqual(
        { name, dataDir: undefined },
      );
    });
    expect(multi).toBeGreaterThan(0); // the production overlay and the base run several
  });

  it('boots each rendering with its documented Secret, and refuses it without the database or console secret', () => {
    each((name, docs, _d, container) => {
      const env = podEnv(docs, container);
      expect({ name, env: env.NODE_ENV }).toEqual({ name, env: 'production' });
      expect({ name, problems: configProblems(env) }).toEqual({ name, problems: [] });
      const { CONSOLE_SESSION_SECRET: _secret, ...noSecret } = env;
      expect({ name, problems: configProblems(noSecret) }).toEqual({
        name,
        problems: [expect.stringMatching(/^CONSOLE_SESSION_SECRET: .*CONSOLE_ENABLED/)],
      });
      if (env.DATA_DIR === undefined) {
        const { DATABASE_URL: _url, ...noDatabase } = env;
        expect({ name, problems: configProblems(noDatabase) }).toEqual({
          name,
          problems: [expect.stringMatching(/^DATABASE_URL: .*DATA_DIR/)],
        });
      }
    });
  });

  it('commits no key: production reads an external Secret whose keys are documented', () => {
    expect(renders.get('overlays/production')!.filter((d) => d.kind === 'Secret')).toEqual([]);
    const example = secretsExample();
    // Placeholders only: empty or an obvious replace-me.
    for (const [key, value] of example) {
      expect({ key, placeholder: value === '' || value.includes('replace') }).toEqual({
        key,
        placeholder: true,
      });
      expect(schema.names.has(key)).toBe(true);
    }
    each((name, _docs, _d, container) => {
      for (const e of (container.env ?? []) as Obj[]) {
        const ref = e.valueFrom?.secretKeyRef as Obj | undefined;
        if (ref !== undefined) {
          expect({ name, key: ref.key, documented: example.has(ref.key) }).toEqual({
            name,
            key: ref.key,
            documented: true,
          });
        }
      }
    });
  });
});
