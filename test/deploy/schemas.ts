import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { Job } from 'kubernetes-models/batch/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import type { K8sObject } from './kustomize.js';

/**
 * Offline validation of Kubernetes objects against the API's schemas, from the `kubernetes-models` package:
 * its classes validate types, formats, enums and required fields (`validate()`), and its TypeScript interfaces
 * say which fields exist, which `unknownFields` uses to catch misspelt or misplaced fields (that the schemas'
 * validators let through, as the API server drops them silently).
 */

interface Model {
  validate(): void;
}
type ModelClass = new (data: never) => Model;

/** apiVersion/kind → the model class and where its interface is declared. */
export const KINDS: Record<string, { model: ModelClass; module: string; type: string }> = {
  'v1/ConfigMap': { model: ConfigMap, module: 'kubernetes-models/v1/ConfigMap', type: 'IConfigMap' },
  'v1/Secret': { model: Secret, module: 'kubernetes-models/v1/Secret', type: 'ISecret' },
  'v1/Service': { model: Service, module: 'kubernetes-models/v1/Service', type: 'IService' },
  'apps/v1/Deployment': {
    model: Deployment,
    module: 'kubernetes-models/apps/v1/Deployment',
    type: 'IDeployment',
  },
  'batch/v1/Job': { model: Job, module: 'kubernetes-models/batch/v1/Job', type: 'IJob' },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    model: HorizontalPodAutoscaler,
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    type: 'IHorizontalPodAutoscaler',
  },
  'policy/v1/PodDisruptionBudget': {
    model: PodDisruptionBudget,
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
    type: 'IPodDisruptionBudget',
  },
};

const kindOf = (o: K8sObject) => {
  const entry = KINDS[`${o.apiVersion}/${o.kind}`];
  if (!entry) throw new Error(`${o.apiVersion} ${o.kind} has no schema here: add it to KINDS`);
  return entry;
};

/** The schema violations of one object ('' when valid). */
export function schemaErrors(o: K8sObject): string {
  try {
    new (kindOf(o).model)(o as never).validate();
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** A file that exists only in memory, beside this one so that `kubernetes-models` resolves from node_modules. */
const VIRTUAL = join(HERE, '__objects__.ts').replace(/\\/g, '/');

/**
 * Fields the objects' types do not have: TypeScript's excess property check of each object as a literal of
 * its kind's interface. One line per problem, naming the object.
 */
export function unknownFields(objects: K8sObject[]): string[] {
  const imports = new Map<string, string>();
  const lines: string[] = [];
  const owner: { from: number; name: string }[] = [];
  for (const [i, o] of objects.entries()) {
    const { module, type } = kindOf(o);
    imports.set(type, module);
    owner.push({ from: lines.length, name: `${o.kind} ${o.metadata.name}` });
    lines.push(...`export const o${i}: ${type} = ${JSON.stringify(o, null, 2)};`.split('\n'));
  }
  const source = [
    ...[...imports].map(([type, module]) => `import type { ${type} } from '${module}';`),
    ...lines.map((l) => l),
  ];
  const offset = imports.size;
  const text = source.join('\n');

  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name.replace(/\\/g, '/') === VIRTUAL
      ? ts.createSourceFile(name, text, language)
      : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name.replace(/\\/g, '/') === VIRTUAL || fileExists(name);
  const program = ts.createProgram([VIRTUAL], options, host);
  const file = program.getSourceFile(VIRTUAL)!;
  return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) => {
    const line = d.start === undefined ? 0 : file.getLineAndCharacterOfPosition(d.start).line - offset;
    const name = [...owner].reverse().find((o) => o.from <= line)?.name ?? 'imports';
    return `${name}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}
