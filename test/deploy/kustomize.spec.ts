import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { type K8sObject, KustomizeError, render, strategicMerge } from './kustomize.js';

/**
 * The test's own kustomize renderer, against small kustomizations and, where installed, against kubectl.
 *
 * @engine-independent: no database (run once, not again on a second engine).
 */

const K8S = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'k8s');

const work = mkdtempSync(join(tmpdir(), 'kustomize-spec-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let sequence = 0;
/** Writes files (path → text) under a fresh directory; returns it. */
function tree(files: Record<string, string>): string {
  const root = join(work, String(++sequence));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: app
          image: web:1.0
          args: ['--a']
          env:
            - name: A
              value: '1'
            - name: B
              value: '2'
          resources:
            limits:
              cpu: '1'
              memory: 1Gi
        - name: sidecar
          image: proxy:2
`;
const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  X: '1'
  Y: '2'
`;

describe('strategicMerge', () => {
  it('merges maps recursively and deletes keys set to null', () => {
    expect(strategicMerge({ a: { b: 1, c: 2 }, d: 3 }, { a: { c: 4, e: 5 }, d: null })).toEqual({
      a: { b: 1, c: 4, e: 5 },
    });
  });

  it('merges containers and env by name, appending new ones; replaces scalar lists', () => {
    const base = { containers: [{ name: 'a', image: 'x', args: ['1'], env: [{ name: 'A', value: '1' }] }] };
    const patch = {
      containers: [
        { name: 'a', args: ['2'], env: [{ name: 'B', value: '2' }] },
        { name: 'b', image: 'y' },
      ],
    };
    expect(strategicMerge(base, patch)).toEqual({
      containers: [
        {
          name: 'a',
          image: 'x',
          args: ['2'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
        { name: 'b', image: 'y' },
      ],
    });
    expect(base.containers[0].args).toEqual(['1']);
  });

  it('refuses what it does not implement', () => {
    expect(() =>
      strategicMerge({ ports: [{ containerPort: 1 }] }, { ports: [{ containerPort: 2 }] }),
    ).toThrow("patching the list 'ports' is not supported");
    expect(() => strategicMerge({ a: 1 }, { $patch: 'delete' })).toThrow('patch directive $patch');
  });
});

describe('render', () => {
  it('applies resources, patches, namespace and images like kustomize', () => {
    const root = tree({
      'base/kustomization.yaml': 'resources:\n  - deployment.yaml\n  - configmap.yaml\n',
      'base/deployment.yaml': DEPLOYMENT,
      'base/configmap.yaml': CONFIGMAP,
      'prod/kustomization.yaml': [
        'namespace: prod',
        'resources: [../base]',
        'images:',
        '  - name: web',
        '    newName: registry.example.com/web',
        '    newTag: "2.0"',
        'patches:',
        '  - path: patch.yaml',
      ].join('\n'),
      'prod/patch.yaml': [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web}',
        'spec:',
        '  replicas: 5',
        '  template:',
        '    spec:',
        '      containers:',
        '        - name: app',
        '          env: [{name: B, value: "3"}]',
        '          resources: {limits: {cpu: "2"}}',
        '---',
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: {name: settings}',
        'data: {Y: "9", Z: "3"}',
      ].join('\n'),
    });
    const [deployment, configMap] = render(join(root, 'prod')) as [K8sObject, K8sObject];
    expect(deployment).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'prod' },
      spec: {
        replicas: 5,
        template: {
          spec: {
            containers: [
              {
                name: 'app',
                image: 'registry.example.com/web:2.0',
                args: ['--a'],
                env: [
                  { name: 'A', value: '1' },
                  { name: 'B', value: '3' },
                ],
                resources: { limits: { cpu: '2', memory: '1Gi' } },
              },
              { name: 'sidecar', image: 'proxy:2' },
            ],
          },
        },
      },
    });
    expect(configMap).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'prod' },
      data: { X: '1', Y: '9', Z: '3' },
    });
    // The base alone is unchanged.
    expect((render(join(root, 'base'))[0].metadata as { namespace?: string }).namespace).toBeUndefined();
  });

  it.each([
    [
      'an unsupported kustomization field',
      { 'kustomization.yaml': 'namePrefix: x-\nresources: []\n' },
      'unsupported fields namePrefix',
    ],
    [
      'a patch with a target',
      {
        'kustomization.yaml':
          'resources: [c.yaml]\npatches:\n  - path: c.yaml\n    target: {kind: ConfigMap}\n',
        'c.yaml': CONFIGMAP,
      },
      'patch fields target are not supported',
    ],
    [
      'a patch of an object that is not there',
      {
        'kustomization.yaml': 'resources: [c.yaml]\npatches:\n  - path: p.yaml\n',
        'c.yaml': CONFIGMAP,
        'p.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {}\n',
      },
      'no /ConfigMap/other to patch',
    ],
    [
      'an object defined twice',
      { 'kustomization.yaml': 'resources: [c.yaml, d.yaml]\n', 'c.yaml': CONFIGMAP, 'd.yaml': CONFIGMAP },
      '/ConfigMap/settings is defined twice',
    ],
    [
      'a document that is not an object',
      { 'kustomization.yaml': 'resources: [c.yaml]\n', 'c.yaml': 'a: 1\n' },
      'not a Kubernetes object',
    ],
  ])('refuses %s', (_what, files, message) => {
    const root = tree(files);
    expect(() => render(root)).toThrow(KustomizeError);
    expect(() => render(root)).toThrow(message);
  });
});

/** `kubectl kustomize DIR`, or null when kubectl is not installed. */
function kubectlKustomize(dir: string): unknown[] | null {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
  } catch {
    return null;
  }
  const text = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(text).map((d) => d.toJS() as unknown);
}

const byId = (objects: unknown[]) =>
  Object.fromEntries(
    (objects as K8sObject[]).map((o) => [
      `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`,
      o,
    ]),
  );

describe('against kubectl kustomize (when kubectl is installed)', () => {
  const available = kubectlKustomize(join(K8S, 'base')) !== null;
  const maybe = available ? it : it.skip;

  maybe.each(['base', 'overlays/example'])(
    'deploy/k8s/%s renders exactly as kubectl kustomize does',
    (dir) => {
      const expected = kubectlKustomize(join(K8S, dir))!;
      expect(byId(render(join(K8S, dir)))).toEqual(byId(expected));
    },
  );
});
