import { randomUUID } from 'node:crypto';
import type { DynamicModule, INestApplicationContext, NestInterceptor, Type } from '@nestjs/common';
import type { SettingsTable } from '../../config/settings.js';
import type { AppConfig } from '../../config/config.js';
import type { ScopeObject } from '../auth/scopes.js';
import type { RouteAlias } from '../http/route-aliases.js';
import type { IntervalTask } from '../tasks/interval-task.js';
import type { ExportModel } from '../../stores/export-model.js';

/** A TypeORM migration class (its name ends with the 13-digit timestamp that orders it). */
export type MigrationClass = new () => unknown;

/** One option of a CLI command (`--name`), parsed by node:util's parseArgs. */
export interface CliOption {
  type: 'string' | 'boolean';
  /** Its line in the command's --help (further lines are indented to the column); unlisted without one. */
  help?: string;
}

/** The parsed options of a command. */
export type CliValues = Record<string, string | boolean | undefined>;

/** What a CLI command's `run` receives. */
export interface CliContext {
  command: string;
  values: CliValues;
  /** The configuration, its database resolved (the embedded one started and migrated). */
  config: AppConfig;
  features: readonly LoadedFeature[];
  out: (line: string) => void;
  err: (line: string) => void;
  /** Runs `fn` in a Nest application context of these modules (with configuration, clock and database). */
  withModules<T>(
    modules: (Type | DynamicModule)[],
    fn: (app: INestApplicationContext) => Promise<T>,
  ): Promise<T>;
}

/**
 * An operator command of `npm run cli --`. `run` imports what it needs lazily (so `--help` stays fast) and
 * returns the exit code; a CliUsageError it throws is a one-line usage error (exit 2).
 */
export interface CliCommand {
  /** `migrate`, or `<group> <command>` (`keys create`). */
  name: string;
  /** One line in the command list of `--help`. */
  summary: string;
  /** The argument synopsis after the command name, e.g. `--email E [--label L]`. */
  synopsis?: string;
  options?: Record<string, CliOption>;
  /** Paragraphs after the options in the command's --help. */
  description?: string;
  /** Checks the arguments before any database is opened (throws CliUsageError). */
  validate?: (values: CliValues, command: string) => void | Promise<void>;
  /** True for the command that applies migrations itself (others get the embedded database migrated first). */
  migrates?: boolean;
  /**
   * A command that changes what the API serves (keys, service accounts, an organization's settings): its work in
   * `withModules` runs in one transaction with its activity log entry (by the system, of this scope, the options
   * masked), so it is never done unlogged.
   */
  activity?: { scope: string };
  run(context: CliContext): Promise<number>;
}

/** A group of two-word commands (`keys create`, `keys list`) with its heading in `<group> --help`. */
export interface CliGroup {
  name: string;
  title: string;
}

/**
 * A scheduled task a feature runs in the service. The TaskRunner (src/common/tasks/task-runner.ts) starts a timer
 * for each declared task every `interval` seconds (the value of that setting; 0 turns it off), and
 * docs/configuration.md lists them from these declarations.
 */
export interface FeatureTask {
  /** Its name: the interval's in the SchedulerRegistry, and its line in docs/configuration.md. */
  name: string;
  /** The setting holding its interval in seconds (0: no timer in this process). */
  interval: string;
  description: string;
  /**
   * The provider that does one tick (an IntervalTask of one of the feature's modules), imported lazily like
   * the modules. Its `enabled()` may keep the timer off in a configuration where the task has nothing to do.
   */
  handler: () => Promise<Type<IntervalTask>>;
  /** Also one tick at boot, before the first interval has passed. */
  atBoot?: boolean;
  /**
   * Up to this many seconds of random delay before the timer starts, so that replicas started together do not
   * tick together (none by default: the first tick comes one interval after boot).
   */
  jitterSeconds?: number;
}

/**
 * A sink of ingestion a feature declares (src/ingest/ingest-sink.ts): the pipeline hands it the events of every
 * capture request it takes, and runs its writes in the request's one transaction.
 */
export interface FeatureSink {
  /** Its name in logs and results (`events`, `recordings`). */
  name: string;
  /**
   * Its place among the sinks: lower prepares and writes first (events 10: their person links are seen by the
   * recordings of the same request, 20).
   */
  order: number;
  /** The provider (an `IngestSink` of one of the feature's modules), imported lazily like the modules. */
  handler: () => Promise<Type>;
}

/**
 * An interceptor of every route a feature declares (`@current` in a path, the activity log): the request pipeline
 * (src/common/http/request-pipeline.interceptor.ts) runs it after the application's own steps (the `/api` body
 * read, the input check, the API request's pool share, the request timeout, the list envelope), around the
 * route's handler and the route's own interceptors. One global interceptor instead of one per feature: Nest's
 * wrapping of each is paid once per request (docs/performance.md).
 */
export interface FeatureInterceptor {
  /** Its name in the boot error when the provider is no interceptor. */
  name: string;
  /**
   * Its place among the features' interceptors: lower runs first, around the higher (the current references
   * 10: the activity log, 20, sees the ids they stand for).
   */
  order: number;
  /** The provider (a `NestInterceptor` of one of the feature's modules), imported lazily like the modules. */
  handler: () => Promise<Type<NestInterceptor>>;
}

/** A test tenant as the fixtures see it: one organization, its first project, and the ids made so far. */
export interface FeatureFixtureTenant {
  organizationId: string;
  projectId: number;
  /** The project's API token (what the public capture and SDK routes take). */
  apiToken: string;
  /** The test clock's now. */
  now: Date;
  /** The ids the fixtures of the features listed before this one made (a playlist pins their recording). */
  ids: Readonly<Record<string, string | number>>;
}

/** What a feature's fixture gets to fill one organization's test tenant. */
export interface FeatureFixtureContext extends FeatureFixtureTenant {
  /**
   * POST/GET/PATCH/DELETE through the real app with the tenant owner's key (none with `public`: the capture and
   * SDK routes); throws on a status ≥ 300.
   */
  request<T = unknown>(
    method: 'get' | 'post' | 'patch' | 'delete',
    path: string,
    body?: unknown,
    options?: { public?: boolean },
  ): Promise<T>;
  /** A new user of the service, made a member (level member) of the organization: its uuid. */
  addMember(): Promise<string>;
}

/**
 * The test fixture of a feature, used by the suites that call every operation of the OpenAPI document with a
 * real key (key confinement, input fuzz), assembled from the list of features in its order: `create` makes one of
 * each of the feature's objects in a tenant and returns the values of its routes' path parameters: by the path
 * segment before `{id}` (`{ annotations: '4f…' }`), and by the parameter's name for any other
 * (`{ run_id: '…' }`). `bodies` gives, by operationId, a request body the operation accepts when the schema's
 * sample is not enough (a destination's config, a free domain, an object of this tenant).
 */
export interface FeatureTestFixture {
  create?(context: FeatureFixtureContext): Promise<Record<string, string | number>>;
  bodies?: Record<string, (tenant: FeatureFixtureTenant) => unknown>;
}

/**
 * A feature: one folder that declares everything it contributes. The application, the data source, the
 * migration list, the scope vocabulary, the CLI, the configuration documentation and the test support are
 * assembled from the list of features (src/features.ts), so adding a feature is one folder and one line.
 */
export interface Feature {
  /** The folder name (`batch-exports`); `npm run test:feature -- <name>` runs its tests. */
  name: string;
  /**
   * Its end-to-end specs: names of files in test/e2e/ without `.e2e-spec.ts` (`batch-export-runs`). With the
   * unit tests of its folder they are what `npm run test:feature -- <name>` runs (tools/test-feature.mjs reads
   * this list from the manifest's source); the suites every feature meets (confinement, fuzz) are nobody's.
   */
  e2e?: readonly string[];
  /**
   * Imports its Nest modules, entities and migrations. Lazy, so that what needs only the declarations (the
   * CLI's --help, the scope vocabulary, the configuration docs) loads none of the application.
   */
  load(): Promise<FeatureParts>;
  /** The objects of its scopes: each gives `<object>:read` and `<object>:write`. */
  scopes?: readonly ScopeObject[];
  /** Groups of its two-word commands. */
  cliGroups?: CliGroup[];
  cli?: CliCommand[];
  /**
   * Its settings table (`<name>.settings.ts`): parsed with every other setting at boot by src/config/config.ts,
   * documented under its heading in docs/configuration.md.
   */
  settings?: SettingsTable;
  tasks?: FeatureTask[];
  /** Its sinks of ingestion: what it stores of capture requests (src/ingest/, docs/architecture.md). */
  sinks?: readonly FeatureSink[];
  /** Its interceptors of every route, run by the request pipeline (src/common/http/, docs/architecture.md). */
  interceptors?: readonly FeatureInterceptor[];
  /**
   * Second path prefixes for routes under a prefix (`/api/environments` for `/api/projects`): every route of
   * the application under `under`, of any feature, also answers under `alias` (src/common/http/route-aliases.ts).
   */
  routeAliases?: readonly RouteAlias[];
  testFixture?: FeatureTestFixture;
}

/** The parts of a feature that load the application's code. */
export interface FeatureParts {
  /** Nest modules, in the order their routes are registered. */
  modules: (Type | DynamicModule)[];
  entities?: Type[];
  /** Its migrations; the global list is every feature's, ordered by timestamp. */
  migrations?: MigrationClass[];
  /**
   * The models batch exports can export from its stores (src/stores/export-model.ts): batch exports fill their
   * registry from these and know no table.
   */
  exportModels?: ExportModel[];
  /**
   * Global modules binding the store seams it implements (src/stores/, e.g. EVENTS_STORE): imported by every CLI
   * command's application whatever modules the command loads, as the features below it inject the seams.
   */
  stores?: (Type | DynamicModule)[];
}

/** A feature with its parts loaded: what AppModule and the data source take. */
export type LoadedFeature = Feature & FeatureParts;

/** Loads the parts of every feature (checking their names are distinct). */
export async function loadFeatures(features: readonly Feature[]): Promise<LoadedFeature[]> {
  checkFeatures(features);
  return Promise.all(features.map(async (feature) => ({ ...feature, ...(await feature.load()) })));
}

/** A text no other fixture uses: `label` and eight random hex digits (names, e-mail local parts). */
export const fixtureText = (label: string): string => `${label}${randomUUID().slice(0, 8)}`;

/** Declares a feature (the identity, typed: `defineFeature({ name, modules, entities, ... })`). */
export function defineFeature<const F extends Feature>(feature: F): F {
  return feature;
}

/** The 13-digit timestamp at the end of a migration class name; throws when there is none. */
export function migrationTimestamp(migration: MigrationClass): number {
  const m = /(\d{13})$/.exec(migration.name);
  if (!m) throw new Error(`migration class ${migration.name} does not end with a 13-digit timestamp`);
  return Number(m[1]);
}

/** Every feature's entities, in the order of the features. */
export function entitiesOf(features: readonly LoadedFeature[]): Type[] {
  return features.flatMap((f) => f.entities ?? []);
}

/** Every feature's migrations in the order they apply: by timestamp (a duplicate class or timestamp throws). */
export function migrationsOf(features: readonly LoadedFeature[]): MigrationClass[] {
  const all = features.flatMap((f) => f.migrations ?? []);
  const seen = new Map<number, string>();
  for (const m of all) {
    const at = migrationTimestamp(m);
    if (seen.has(at)) throw new Error(`migrations ${seen.get(at)} and ${m.name} share the timestamp ${at}`);
    seen.set(at, m.name);
  }
  return [...all].sort((a, b) => migrationTimestamp(a) - migrationTimestamp(b));
}

/** Throws when two features share a name. */
export function checkFeatures(features: readonly Feature[]): void {
  const names = new Set<string>();
  for (const f of features) {
    if (names.has(f.name)) throw new Error(`two features are named '${f.name}'`);
    names.add(f.name);
  }
}
