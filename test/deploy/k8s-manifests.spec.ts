import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseConfig, SETTINGS } from '../../src/config/config.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { type K8sObject, readYamlDocuments, render } from './kustomize.js';
import { schemaErrors, unknownFields } from './schemas.js';

/**
 * deploy/k8s rendered (base and the example overlay) and checked offline: every object against the Kubernetes
 * schemas, the settings against the app's own config parser, the security and drain rules, and the wiring
 * between the objects, the Dockerfile and the app (ports, probe paths, the migration command).
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const K8S = join(ROOT, 'deploy', 'k8s');
const SECRET_TEMPLATE = join(K8S, 'base', 'secret.template.yaml');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

type Obj = Record<string, unknown>;
type Container = {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Obj & { capabilities?: { drop?: string[]; add?: string[] } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
};
type Probe = {
  httpGet?: { path: string; port: number | string };
  periodSeconds?: number;
  failureThreshold?: number;
};
type PodSpec = {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: Obj;
  volumes?: (Obj & { name: string; emptyDir?: Obj })[];
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
  restartPolicy?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
};
type PodTemplate = {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
};

const settingNames = new Set(Object.keys(SETTINGS));
/** Variables Node.js itself (NODE_OPTIONS) or its C library (glibc's MALLOC_*) reads, not the app's settings. */
const NODE_VARIABLES = new Set([
  'NODE_OPTIONS',
  'MALLOC_ARENA_MAX',
  'MALLOC_MMAP_THRESHOLD_',
  'MALLOC_TRIM_THRESHOLD_',
]);
const dockerUser = /^USER\s+(\d+)(?::(\d+))?\s*$/m.exec(dockerfile);
const dockerWorkdir = [...dockerfile.matchAll(/^WORKDIR\s+(\S+)/gm)].at(-1)?.[1];
const dockerExposed = Number(/^EXPOSE\s+(\d+)/m.exec(dockerfile)?.[1]);

/** CPU ("250m", "1") in cores and memory ("512Mi", "1Gi") in bytes, for comparing requests with limits. */
function quantity(value: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(value));
  if (!m) throw new Error(`not a quantity: ${value}`);
  const units: Record<string, number> = {
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
  };
  return Number(m[1]) * (m[2] ? units[m[2]] : 1);
}

describe.each(['base', 'overlays/example'])('deploy/k8s/%s', (dir) => {
  const objects = render(join(K8S, dir));
  const [secret] = readYamlDocuments(SECRET_TEMPLATE) as K8sObject[];
  const find = <T = Obj>(kind: string): T & K8sObject => {
    const found = objects.filter((o) => o.kind === kind);
    expect(found.map((o) => o.kind)).toEqual([kind]);
    return found[0] as T & K8sObject;
  };
  /** The object of `kind` named `name` (exactly one). */
  const named = <T = Obj>(kind: string, name: string): T & K8sObject => {
    const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
    expect(found.map((o) => `${o.kind} ${o.metadata.name}`)).toEqual([`${kind} ${name}`]);
    return found[0] as T & K8sObject;
  };
  type DeploymentObj = {
    spec: { replicas: number; selector: { matchLabels: Record<string, string> }; template: PodTemplate };
  };
  const configMap = find<{ data: Record<string, string> }>('ConfigMap');
  const deployment = named<DeploymentObj>('Deployment', 'org-admin-service');
  const workers = named<DeploymentObj>('Deployment', 'org-admin-service-worker');
  const job = find<{ spec: { template: PodTemplate; backoffLimit?: number } }>('Job');
  const service = find<{
    spec: {
      selector: Record<string, string>;
      ports: { name: string; port: number; targetPort: string | number }[];
    };
  }>('Service');
  const hpa = find<{
    spec: {
      scaleTargetRef: { apiVersion: string; kind: string; name: string };
      minReplicas: number;
      maxReplicas: number;
    };
  }>('HorizontalPodAutoscaler');
  type PdbObj = {
    spec: {
      selector: { matchLabels: Record<string, string> };
      maxUnavailable?: number;
      minAvailable?: number;
    };
  };
  const pdb = named<PdbObj>('PodDisruptionBudget', 'org-admin-service');
  const workerPdb = named<PdbObj>('PodDisruptionBudget', 'org-admin-service-worker');
  const app = deployment.spec.template.spec.containers.find((c) => c.name === 'app')!;
  const worker = workers.spec.template.spec.containers.find((c) => c.name === 'worker')!;
  const pods: [string, PodSpec][] = [
    ['Deployment', deployment.spec.template.spec],
    ['worker Deployment', workers.spec.template.spec],
    ['Job', job.spec.template.spec],
  ];
  /** The environment a pod of the Deployment gets: ConfigMap, then Secret (template values), then `env`. */
  const podEnv = (c: Container) => {
    const env: Record<string, string> = {};
    for (const from of c.envFrom ?? []) {
      if (from.configMapRef) Object.assign(env, configMap.data);
      if (from.secretRef) Object.assign(env, secret.stringData as Record<string, string>);
    }
    for (const e of c.env ?? []) env[e.name] = e.value ?? '';
    return env;
  };
  /** The Deployment's settings as the app parses them (fails the test, not the collection, when invalid). */
  let parsed: ReturnType<typeof parseConfig> | undefined;
  const settings = () => (parsed ??= parseConfig(podEnv(app)));
  const portNumber = (c: Container, port: number | string) =>
    typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;

  it('holds exactly the service objects, and never the Secret template', () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'Deployment',
        'HorizontalPodAutoscaler',
        'Job',
        'PodDisruptionBudget',
        'PodDisruptionBudget',
        'Service',
      ].sort(),
    );
  });

  describe('against the Kubernetes schemas', () => {
    it.each([...objects, secret].map((o) => [`${o.kind} ${o.metadata.name}`, o] as const))(
      '%s is valid',
      (_name, o) => {
        expect(schemaErrors(o)).toBe('');
      },
    );

    it('has no field unknown to its kind (misspelt or misplaced)', () => {
      expect(unknownFields([...objects, secret])).toEqual([]);
    });
  });

  describe('settings', () => {
    it('sets only variables the app reads (keys of SETTINGS), from the ConfigMap, the Secret and env', () => {
      const names = [
        ...Object.keys(configMap.data),
        ...Object.keys(secret.stringData as Obj),
        ...pods.flatMap(([, p]) => p.containers.flatMap((c) => (c.env ?? []).map((e) => e.name))),
      ];
      expect(names.filter((n) => !settingNames.has(n) && !NODE_VARIABLES.has(n))).toEqual([]);
    });

    it("sizes the service's V8 heap (NODE_OPTIONS) at half its container's memory limit, young generation held", () => {
      const nodeOptions = app.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
      const limit = /^(\d+)Mi$/.exec(app.resources?.limits?.memory ?? '');
      expect(limit).not.toBeNull();
      // Old generation: half the limit. Young generation: three semi-spaces of 8 MB, not Node 24's 64 MB default.
      expect(nodeOptions).toBe(`--max-old-space-size=${Number(limit?.[1]) / 2} --max-semi-space-size=8`);
    });

    it('holds glibc\'s malloc to two arenas and its starting thresholds (docs/performance.md, "Memory")', () => {
      const value = (name: string) => app.env?.find((e) => e.name === name)?.value;
      expect(value('MALLOC_ARENA_MAX')).toBe('2');
      expect(value('MALLOC_MMAP_THRESHOLD_')).toBe('131072');
      expect(value('MALLOC_TRIM_THRESHOLD_')).toBe('131072');
    });

    it('the image sets the same malloc variables, so a container run outside Kubernetes gets them too', () => {
      const malloc = (app.env ?? []).filter((e) => e.name.startsWith('MALLOC_'));
      expect(malloc.map((e) => e.name).sort()).toEqual(
        ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_'].sort(),
      );
      // The runtime stage's ENV instructions, continuation lines joined.
      const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
      const env = [...runtimeStage.replace(/\\\n\s*/g, ' ').matchAll(/^ENV\s+(.*)$/gm)]
        .map((m) => m[1])
        .join(' ');
      for (const { name, value } of malloc) expect(env.split(/\s+/)).toContain(`${name}=${value}`);
    });

    it("every value parses with the app's config parser", () => {
      expect(() => parseConfig(configMap.data)).not.toThrow();
      for (const [, pod] of pods)
        for (const c of pod.containers) expect(() => parseConfig(podEnv(c))).not.toThrow();
      expect(settings().NODE_ENV).toBe('production');
    });

    it('takes the database from the Secret, never from the ConfigMap, and never migrates at boot', () => {
      expect(configMap.data).not.toHaveProperty('DATABASE_URL');
      expect(settings().DATABASE_URL).toMatch(/^postgres:\/\//);
      expect(settings().MIGRATIONS_RUN).toBe(false);
      for (const [, pod] of pods) {
        for (const c of pod.containers) {
          expect(c.envFrom).toEqual([
            { configMapRef: { name: configMap.metadata.name } },
            { secretRef: { name: secret.metadata.name } },
          ]);
        }
      }
    });
  });

  describe('the Secret template', () => {
    it('holds placeholders only, clearly marked', () => {
      expect(secret.kind).toBe('Secret');
      expect(secret).not.toHaveProperty('data');
      const values = Object.values(secret.stringData as Record<string, string>);
      expect(values.length).toBeGreaterThan(0);
      for (const v of values) expect(v === '' || v.includes('CHANGE_ME')).toBe(true);
      expect(JSON.stringify(secret.metadata.annotations)).toContain('placeholder');
      expect(readFileSync(SECRET_TEMPLATE, 'utf8')).toMatch(
        /^# TEMPLATE ONLY: placeholder values, no real secret/,
      );
    });
  });

  describe('security', () => {
    it.each(pods)(
      '%s pods run as the image’s non-root user, without privileges or a writable root',
      (_k, pod) => {
        expect(dockerUser).not.toBeNull();
        expect(pod.securityContext).toMatchObject({
          runAsNonRoot: true,
          runAsUser: Number(dockerUser![1]),
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect(Number(dockerUser![1])).toBeGreaterThan(0);
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(pod.hostNetwork ?? false).toBe(false);
        expect(pod.hostPID ?? false).toBe(false);
        for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
          expect(c.securityContext).toMatchObject({
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            capabilities: { drop: ['ALL'] },
          });
          expect(c.securityContext?.privileged ?? false).toBe(false);
          expect(c.securityContext?.capabilities?.add ?? []).toEqual([]);
          // The only writable place: /tmp, an emptyDir.
          const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
          expect(tmp).toBeDefined();
          expect(pod.volumes?.find((v) => v.name === tmp!.name)?.emptyDir).toBeDefined();
        }
      },
    );

    it.each(pods)('%s containers request and limit CPU and memory (requests within limits)', (_k, pod) => {
      for (const c of pod.containers) {
        for (const r of ['cpu', 'memory']) {
          const request = c.resources?.requests?.[r];
          const limit = c.resources?.limits?.[r];
          expect({ container: c.name, r, request, limit }).toEqual({
            container: c.name,
            r,
            request: expect.anything(),
            limit: expect.anything(),
          });
          expect(quantity(request!)).toBeLessThanOrEqual(quantity(limit!));
        }
      }
    });
  });

  describe('the Deployment', () => {
    it('runs two or more replicas, spread and selected by its own labels', () => {
      expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
      expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
      expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
      expect(deployment.spec.template.metadata.labels).toMatchObject(pdb.spec.selector.matchLabels);
      // The migration Job's pods are not behind the Service.
      expect(job.spec.template.metadata.labels).not.toMatchObject(service.spec.selector);
    });

    it('listens where the image and the settings say', () => {
      expect(portNumber(app, 'http')).toBe(settings().PORT);
      expect(settings().PORT).toBe(dockerExposed);
      expect(settings().HOST).toBe('0.0.0.0');
    });

    it('probes startup and readiness on /readyz and liveness on /healthz, on the HTTP port', () => {
      expect(app.startupProbe?.httpGet?.path).toBe('/readyz');
      expect(app.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(app.livenessProbe?.httpGet?.path).toBe('/healthz');
      for (const probe of [app.startupProbe, app.readinessProbe, app.livenessProbe]) {
        expect(portNumber(app, probe!.httpGet!.port)).toBe(settings().PORT);
      }
      // Startup allows at least 30 s for the database to answer.
      const startup = app.startupProbe!;
      expect((startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3)).toBeGreaterThanOrEqual(30);
    });

    it('pauses in preStop while endpoints drain, and the grace period covers the pause plus SHUTDOWN_TIMEOUT_MS', () => {
      const preStop = app.lifecycle?.preStop;
      const pause =
        preStop?.sleep?.seconds ??
        (preStop?.exec?.command[0] === 'sleep' && preStop.exec.command.length === 2
          ? Number(preStop.exec.command[1])
          : NaN);
      expect(pause).toBeGreaterThanOrEqual(5);
      const grace = deployment.spec.template.spec.terminationGracePeriodSeconds!;
      expect(grace).toBeGreaterThan(pause + settings().SHUTDOWN_TIMEOUT_MS / 1000);
    });

    it('declares the metrics port of METRICS_PORT and asks Prometheus to scrape it', () => {
      expect(settings().METRICS_PORT).toBeGreaterThan(0);
      expect(portNumber(app, 'metrics')).toBe(settings().METRICS_PORT);
      expect(deployment.spec.template.metadata.annotations).toEqual({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(settings().METRICS_PORT),
        'prometheus.io/path': '/metrics',
      });
    });
  });

  it('the Service exposes the HTTP and the metrics ports of the pods', () => {
    const targets = Object.fromEntries(
      service.spec.ports.map((p) => [p.name, portNumber(app, p.targetPort)]),
    );
    expect(targets).toEqual({ http: settings().PORT, metrics: settings().METRICS_PORT });
  });

  it('the migration Job runs `node dist/cli.js migrate` from the same image, once', () => {
    const [migrate] = job.spec.template.spec.containers;
    expect(job.spec.template.spec.containers).toHaveLength(1);
    expect(migrate.command).toEqual(['node', 'dist/cli.js', 'migrate']);
    expect(migrate.args).toBeUndefined();
    // dist/ sits in the image's working directory.
    expect(migrate.workingDir ?? dockerWorkdir).toBe('/app');
    expect(dockerfile).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(migrate.image).toBe(app.image);
    expect(['Never', 'OnFailure']).toContain(job.spec.template.spec.restartPolicy);
  });

  it('the pre-deploy selector of docs/operations.md picks the migration Job and the ConfigMap it reads, nothing else', () => {
    const component = (o: K8sObject) =>
      (o.metadata.labels as Record<string, string>)['app.kubernetes.io/component'];
    const selected = objects.filter((o) => ['config', 'migrate'].includes(component(o)));
    expect(selected.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Job']);
    expect(readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')).toContain(
      "-l 'app.kubernetes.io/component in (config,migrate)'",
    );
  });

  it('docs/operations.md lists every file of the base, and the base points at it', () => {
    const kustomization = readFileSync(join(ROOT, 'deploy', 'k8s', 'base', 'kustomization.yaml'), 'utf8');
    const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const files = [...kustomization.matchAll(/^ {2}- (\S+\.yaml)$/gm)].map((m) => m[1]);
    expect(files).toContain('worker-deployment.yaml');
    for (const file of [...files, 'secret.template.yaml']) expect(operations).toContain(`  ${file}  `);
    expect(kustomization).toContain('(docs/operations.md, "Deploying to Kubernetes")');
    expect(operations).toContain('\n## Deploying to Kubernetes\n');
  });

  it('the HorizontalPodAutoscaler scales the Deployment on CPU from two replicas up', () => {
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
    expect(deployment.spec.replicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
    // Utilization is relative to the CPU request.
    expect(app.resources?.requests?.cpu).toBeDefined();
  });

  describe('the worker Deployment', () => {
    const workerSettings = () => parseConfig(podEnv(worker));

    it('runs the batch export workers, which the API pods do not', () => {
      expect(settings().BATCH_EXPORT_WORKERS).toBe(false);
      expect(workerSettings().BATCH_EXPORT_WORKERS).toBe(true);
      expect(workerSettings().BATCH_EXPORT_WORKER_CONCURRENCY).toBeGreaterThanOrEqual(1);
      expect(worker.image).toBe(app.image);
      expect(worker.command ?? null).toBeNull();
    });

    it('is selected by its own labels, by no Service, and by its own PodDisruptionBudget', () => {
      expect(workers.spec.replicas).toBeGreaterThanOrEqual(2);
      const labels = workers.spec.template.metadata.labels;
      expect(labels).toMatchObject(workers.spec.selector.matchLabels);
      expect(labels).not.toMatchObject(service.spec.selector);
      expect(labels).not.toMatchObject(deployment.spec.selector.matchLabels);
      expect(deployment.spec.template.metadata.labels).not.toMatchObject(workers.spec.selector.matchLabels);
      expect(labels).toMatchObject(workerPdb.spec.selector.matchLabels);
      expect(labels).not.toMatchObject(pdb.spec.selector.matchLabels);
      expect(workerPdb.spec.maxUnavailable).toBe(1);
    });

    it('probes startup and readiness on /readyz and liveness on /healthz', () => {
      expect(worker.startupProbe?.httpGet?.path).toBe('/readyz');
      expect(worker.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(worker.livenessProbe?.httpGet?.path).toBe('/healthz');
      for (const probe of [worker.startupProbe, worker.readinessProbe, worker.livenessProbe]) {
        expect(portNumber(worker, probe!.httpGet!.port)).toBe(workerSettings().PORT);
      }
    });

    it('drains: runs get BATCH_EXPORT_DRAIN_TIMEOUT_MS within SHUTDOWN_TIMEOUT_MS, within the grace period', () => {
      const s = workerSettings();
      expect(s.BATCH_EXPORT_DRAIN_TIMEOUT_MS).toBeGreaterThanOrEqual(60000);
      expect(s.BATCH_EXPORT_DRAIN_TIMEOUT_MS).toBeLessThan(s.SHUTDOWN_TIMEOUT_MS);
      expect(workers.spec.template.spec.terminationGracePeriodSeconds!).toBeGreaterThan(
        s.SHUTDOWN_TIMEOUT_MS / 1000,
      );
      const nodeOptions = worker.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
      expect(nodeOptions).toBe(
        `--max-old-space-size=${quantity(worker.resources!.limits!.memory) / 2 ** 20 / 2} --max-semi-space-size=8`,
      );
      // Two malloc arenas and glibc's starting thresholds held, as the API pods (docs/performance.md, "Memory").
      expect(worker.env?.find((e) => e.name === 'MALLOC_ARENA_MAX')?.value).toBe('2');
      expect(worker.env?.find((e) => e.name === 'MALLOC_MMAP_THRESHOLD_')?.value).toBe('131072');
      expect(worker.env?.find((e) => e.name === 'MALLOC_TRIM_THRESHOLD_')?.value).toBe('131072');
    });
  });

  it('the PodDisruptionBudget keeps a replica up at the smallest size', () => {
    const available =
      pdb.spec.minAvailable ?? hpa.spec.minReplicas - (pdb.spec.maxUnavailable ?? hpa.spec.minReplicas);
    expect(available).toBeGreaterThanOrEqual(1);
    expect(available).toBeLessThan(hpa.spec.minReplicas);
  });
});

describe('pointers to the documentation in deploy/', () => {
  /** Every file under deploy/, recursively. */
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
    );
  /** `(docs/x.md, "Heading")`, `(README, "Heading")`, `(docs/x.md)`: a document and optionally its section. */
  const POINTER = /\((README(?:\.md)?|[\w./-]+\.md)(?:, "([^"]+)")?\)/g;
  type Pointer = { where: string; doc: string; heading: string | null };
  const pointersIn = (text: string, where: string): Pointer[] =>
    [...text.matchAll(POINTER)].map((m) => ({
      where,
      doc: m[1] === 'README' ? 'README.md' : m[1],
      heading: m[2] ?? null,
    }));
  const headings = (doc: string) =>
    [...readFileSync(join(ROOT, doc), 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1].trim());
  const broken = (p: Pointer) =>
    !existsSync(join(ROOT, p.doc)) || (p.heading !== null && !headings(p.doc).includes(p.heading));

  it('name an existing document and one of its headings', () => {
    const pointers = files(join(ROOT, 'deploy')).flatMap((file) =>
      pointersIn(readFileSync(file, 'utf8'), relative(ROOT, file)),
    );
    // At least the base's kustomization, ConfigMap and migration Job point at the Kubernetes section.
    expect(pointers.filter((p) => p.heading === 'Deploying to Kubernetes').map((p) => p.where)).toEqual(
      expect.arrayContaining([
        'deploy/k8s/base/kustomization.yaml',
        'deploy/k8s/base/configmap.yaml',
        'deploy/k8s/base/migration-job.yaml',
      ]),
    );
    expect(pointers.filter(broken)).toEqual([]);
  });

  it('the check refuses a section the named document lacks, and a missing document', () => {
    const sample = [
      '# (README, "Deploying to Kubernetes")',
      '# (docs/operations.md, "Deploying to Kubernetes")',
      '# (docs/nowhere.md)',
      '# (docs/operations.md, "No such heading")',
    ].join('\n');
    expect(
      pointersIn(sample, 'sample')
        .filter(broken)
        .map((p) => [p.doc, p.heading]),
    ).toEqual([
      ['README.md', 'Deploying to Kubernetes'],
      ['docs/nowhere.md', null],
      ['docs/operations.md', 'No such heading'],
    ]);
  });
});

describe('deploy/k8s/overlays/example over the base', () => {
  const base = render(join(K8S, 'base'));
  const overlay = render(join(K8S, 'overlays', 'example'));

  it('puts every object in its namespace and uses its image for the service, the workers and the migration', () => {
    expect(base.every((o) => o.metadata.namespace === undefined)).toBe(true);
    expect(overlay.every((o) => o.metadata.namespace === 'org-admin')).toBe(true);
    const images = JSON.stringify(overlay).match(/"image":"[^"]+"/g);
    expect(images).toEqual([
      '"image":"registry.example.com/org-admin-service:0.1.0"',
      '"image":"registry.example.com/org-admin-service:0.1.0"',
      '"image":"registry.example.com/org-admin-service:0.1.0"',
    ]);
  });
});

describe('the probe paths answer in the app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('GET of each probe path of the Deployment is 200', async () => {
    const deployment = render(join(K8S, 'base')).find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: PodTemplate };
    };
    const app = deployment.spec.template.spec.containers[0];
    const paths = [app.startupProbe, app.readinessProbe, app.livenessProbe].map((p) => p!.httpGet!.path);
    expect(new Set(paths)).toEqual(new Set(['/readyz', '/healthz']));
    for (const path of paths) await t.http.get(path).expect(200);
  });
});

describe('the schema checks themselves', () => {
  const deployment = (container: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
    ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'broken' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: {
          metadata: { labels: { a: 'b' } },
          spec: { containers: [{ name: 'c', image: 'i', ...container }] },
        },
        ...spec,
      },
    }) as K8sObject;

  it('schemaErrors reports wrong types and missing required fields', () => {
    expect(schemaErrors(deployment({ ports: [{ containerPort: 'http' }] }))).toContain(
      'containers/0/ports/0/containerPort must be integer',
    );
    expect(schemaErrors(deployment({ name: undefined }))).toContain(
      'containers/0 must have required property name',
    );
    expect(schemaErrors(deployment({}))).toBe('');
  });

  it('unknownFields reports misspelt and misplaced fields, naming the object', () => {
    expect(
      unknownFields([
        deployment({ readinesProbe: {} }),
        deployment({}, { terminationGracePeriodSeconds: 30 }),
        deployment({}),
      ]),
    ).toEqual([
      expect.stringMatching(/^Deployment broken: .*'"readinesProbe"' does not exist in type 'IContainer'/),
      expect.stringMatching(/^Deployment broken: .*'"terminationGracePeriodSeconds"' does not exist in type/),
    ]);
  });
});
