import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * A small renderer of the kustomize features deploy/k8s uses, so the manifest tests need no kustomize binary:
 * `resources` (files and directories), `patches` given by `path` (strategic merge patches, merged by the
 * patch's kind and name), `namespace` and `images`. Anything else in a kustomization, or a patch needing more
 * of strategic merge than maps and the name-keyed lists below, is refused with an error rather than rendered
 * differently from kustomize. Where kubectl is installed, kustomize.spec.ts compares the two outputs.
 */

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
};

const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches']);

/** Lists that strategic merge patches merge item by item, by this key (as Kubernetes' patchMergeKey). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
};

/** Kinds without a namespace among those a kustomization here could hold. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
]);

export class KustomizeError extends Error {}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  namespace?: string;
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
  patches?: { path: string }[];
}

const isMap = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

export function readYamlDocuments(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length) throw new KustomizeError(`${file}: ${doc.errors[0].message}`);
      return doc.toJS() as unknown;
    })
    .filter((d) => d !== null && d !== undefined);
}

function asObject(doc: unknown, file: string): K8sObject {
  if (!isMap(doc) || typeof doc.apiVersion !== 'string' || typeof doc.kind !== 'string') {
    throw new KustomizeError(`${file}: not a Kubernetes object (apiVersion and kind required)`);
  }
  const metadata = doc.metadata;
  if (!isMap(metadata) || typeof metadata.name !== 'string') {
    throw new KustomizeError(`${file}: ${doc.kind} without metadata.name`);
  }
  return doc as K8sObject;
}

const idOf = (o: Pick<K8sObject, 'apiVersion' | 'kind' | 'metadata'>) =>
  `${o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : ''}/${o.kind}/${o.metadata.name}`;

/** Strategic merge of `patch` into `base` (a new value; the inputs are not changed). */
export function strategicMerge(base: unknown, patch: unknown, field = ''): unknown {
  if (isMap(patch)) {
    const out: Record<string, unknown> = isMap(base) ? { ...base } : {};
    for (const [key, value] of Object.entries(patch)) {
      if (key.startsWith('$')) throw new KustomizeError(`patch directive ${key} is not supported`);
      if (value === null) delete out[key];
      else out[key] = strategicMerge(out[key], value, key);
    }
    return out;
  }
  if (Array.isArray(patch)) {
    const key = MERGE_KEYS[field];
    if (!key) {
      if (Array.isArray(base) && base.some(isMap)) {
        throw new KustomizeError(
          `patching the list '${field}' is not supported (only ${Object.keys(MERGE_KEYS)})`,
        );
      }
      return structuredClone(patch);
    }
    const out = Array.isArray(base) ? base.map((item) => structuredClone(item)) : [];
    for (const item of patch) {
      if (!isMap(item) || typeof item[key] !== 'string') {
        throw new KustomizeError(`items of '${field}' in a patch need '${key}'`);
      }
      const at = out.findIndex((b) => isMap(b) && b[key] === item[key]);
      if (at >= 0) out[at] = strategicMerge(out[at], item, '');
      else out.push(structuredClone(item));
    }
    return out;
  }
  return patch;
}

/** Where pod templates keep their containers, by kind. */
function podSpecs(o: K8sObject): Record<string, unknown>[] {
  const spec = o.spec;
  if (!isMap(spec)) return [];
  const template = isMap(spec.template) ? spec.template : null;
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].includes(o.kind)) {
    return template && isMap(template.spec) ? [template.spec] : [];
  }
  if (o.kind === 'CronJob' && isMap(spec.jobTemplate) && isMap(spec.jobTemplate.spec)) {
    const t = spec.jobTemplate.spec.template;
    return isMap(t) && isMap(t.spec) ? [t.spec] : [];
  }
  if (o.kind === 'Pod') return [spec];
  return [];
}

function setImages(objects: K8sObject[], images: NonNullable<Kustomization['images']>): void {
  for (const o of objects) {
    for (const podSpec of podSpecs(o)) {
      for (const list of ['containers', 'initContainers']) {
        const containers = podSpec[list];
        if (!Array.isArray(containers)) continue;
        for (const c of containers as Record<string, unknown>[]) {
          if (typeof c.image !== 'string') continue;
          const m = /^(.+?)(?::([^:/@]+))?(?:@(.+))?$/.exec(c.image);
          if (!m) continue;
          const rule = images.find((i) => i.name === m[1]);
          if (!rule) continue;
          const name = rule.newName ?? m[1];
          if (rule.digest) c.image = `${name}@${rule.digest}`;
          else if (rule.newTag !== undefined) c.image = `${name}:${rule.newTag}`;
          else c.image = `${name}${m[2] ? `:${m[2]}` : ''}${m[3] ? `@${m[3]}` : ''}`;
        }
      }
    }
  }
}

/** The objects a kustomization directory renders to, in the order of its resources. */
export function render(dir: string): K8sObject[] {
  const file = join(dir, 'kustomization.yaml');
  const [doc] = readYamlDocuments(file);
  if (!isMap(doc)) throw new KustomizeError(`${file}: not a kustomization`);
  const unsupported = Object.keys(doc).filter((k) => !SUPPORTED_FIELDS.has(k));
  if (unsupported.length) throw new KustomizeError(`${file}: unsupported fields ${unsupported.join(', ')}`);
  const k = doc as Kustomization;
  if (k.kind !== undefined && k.kind !== 'Kustomization') throw new KustomizeError(`${file}: kind ${k.kind}`);

  const objects: K8sObject[] = [];
  for (const entry of k.resources ?? []) {
    const path = resolve(dir, entry);
    if (statSync(path).isDirectory()) objects.push(...render(path));
    else objects.push(...readYamlDocuments(path).map((d) => asObject(d, path)));
  }
  const ids = objects.map(idOf);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate) throw new KustomizeError(`${file}: ${duplicate} is defined twice`);

  for (const entry of k.patches ?? []) {
    const unknown = Object.keys(entry).filter((key) => key !== 'path');
    if (unknown.length)
      throw new KustomizeError(`${file}: patch fields ${unknown.join(', ')} are not supported`);
    const path = resolve(dir, entry.path);
    for (const patch of readYamlDocuments(path).map((d) => asObject(d, path))) {
      const at = objects.findIndex((o) => idOf(o) === idOf(patch));
      if (at < 0) throw new KustomizeError(`${path}: no ${idOf(patch)} to patch`);
      objects[at] = strategicMerge(objects[at], patch) as K8sObject;
    }
  }

  if (k.namespace) {
    for (const o of objects)
      if (!CLUSTER_SCOPED.has(o.kind)) o.metadata = { ...o.metadata, namespace: k.namespace };
  }
  if (k.images) setImages(objects, k.images);
  return objects;
}
