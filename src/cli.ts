import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { type DynamicModule, type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { ClockModule } from './common/time/clock.module.js';
import { AppConfig, ConfigError } from './config/config.js';
import { CoreModule } from './config/core.module.js';
import { createDataSource } from './database/data-source.js';
import { DatabaseModule } from './database/database.module.js';
import { runMigrations } from './database/migrate.js';
import { resolveDatabase, type ResolvedDatabase } from './database/resolve-database.js';
import { CaptureModule } from './capture/capture.module.js';
import { CaptureService } from './capture/capture.service.js';
import { isUuid } from './common/validation/ids.js';
import { PLUGINS_ACCESS_LEVELS } from './organizations/organizations.service.js';
import { PersonalApiKeysModule } from './personal-api-keys/personal-api-keys.module.js';
import { PersonalApiKeysService } from './personal-api-keys/personal-api-keys.service.js';
import { PluginsModule } from './plugins/plugins.module.js';
import { PluginsService } from './plugins/plugins.service.js';
import { ProjectsModule } from './projects/projects.module.js';
import { ProjectsService } from './projects/projects.service.js';
import { demoCaptureRequests } from './session-recordings/demo/demo-sessions.js';
import {
  addPurgeResults,
  NOTHING_PURGED,
  type PurgeResult,
  RecordingRetentionService,
} from './session-recordings/recording-retention.service.js';
import { SessionRecordingsModule } from './session-recordings/session-recordings.module.js';
import { SnapshotObjectStore } from './session-recordings/storage/snapshot-object-store.js';
import { SnapshotPacker } from './session-recordings/storage/snapshot-packer.js';
import {
  type MigrationReport,
  type MigrationTarget,
  SnapshotStorageMaintenance,
} from './session-recordings/storage/snapshot-storage-maintenance.js';

/** A usage or input error: one line on stderr, exit code 2. */
export class CliUsageError extends Error {}

const HELP: Record<string, string> = {
  main: `Usage: node dist/cli.js <command> [options]

Commands:
  keys create              Create a personal API key (creates the user if missing)
  keys list                List a user's keys (masked)
  keys revoke              Revoke a key
  orgs set-plugins-access  Set an organization's plugins_access_level (9 lets it publish global plugins)
  migrate                  Apply pending database migrations (under an advisory lock)
  demo                     Fill a project with generated session recordings
  recordings purge            Delete expired session recordings now
  recordings migrate-storage  Move snapshot chunks between the database and the object store
  recordings sweep-orphans    Delete objects of the recording store that no snapshot chunk points at
  recordings pack             Pack the chunks waiting in the database into objects now
  recordings lifecycle-rules  Print (or apply) the bucket lifecycle rules that expire packed objects

Run "node dist/cli.js <command> --help" (or "node dist/cli.js help <command>") for a command's options;
"node dist/cli.js keys --help" lists the key commands, "node dist/cli.js orgs --help" the organization ones.`,
  recordings: `Usage: node dist/cli.js recordings <purge|migrate-storage|sweep-orphans|pack|lifecycle-rules> [options]

Session recordings (operator actions):
  recordings purge            Delete expired session recordings now
  recordings migrate-storage  Move snapshot chunks between the database and the object store
  recordings sweep-orphans    Delete objects of the recording store that no snapshot chunk points at
  recordings pack             Pack the chunks waiting in the database into objects now

Run "node dist/cli.js recordings <command> --help" for a command's options.`,
  'recordings migrate-storage': `Usage: node dist/cli.js recordings migrate-storage --to s3|packed|postgres [--max-chunks N]

  --to          s3: move every chunk stored in the database into RECORDING_S3_BUCKET, one object each;
                packed: move every chunk stored in the database or as an object of its own into packed
                objects (many chunks each, read by byte range);
                postgres: move every chunk stored as an object (either layout) or waiting to be packed back
                into the database
  --max-chunks  stop after this many chunks (the rest stay where they are; run again to go on)

Moves one chunk at a time (to packed: a page of chunks per object), each verified before its source is dropped:
the SHA-256 of what was written, read back, must equal the source's. Progress is kept in the chunks themselves, so an interrupted run (Ctrl-C stops
after the current chunk) resumes when started again. Prints how many chunks each backend holds at the end.
Capture may run meanwhile; set RECORDING_STORAGE to the new backend first so new chunks go there.
Needs RECORDING_S3_BUCKET (and the store's AWS_* variables) in both directions.`,
  'recordings sweep-orphans': `Usage: node dist/cli.js recordings sweep-orphans [--all]

  --all  list the whole prefix, also with RECORDING_S3_LAYOUT=packed

Deletes the objects under RECORDING_S3_PREFIX that no snapshot chunk points at and that are older than
RECORDING_ORPHAN_GRACE_MINUTES (left by captures that failed after their upload, packer passes that died
after theirs, or deleted organizations). With RECORDING_STORAGE=s3 and RECORDING_S3_LAYOUT=packed it lists
only the packed objects of the last days (packed/<day>/), unless --all. The service does the same (without
--all) every RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS.`,
  'recordings lifecycle-rules': `Usage: node dist/cli.js recordings lifecycle-rules [--apply]

  --apply  write the rules into RECORDING_S3_BUCKET's lifecycle configuration (rules whose ID does not start
           with recordings-packed- are kept; those that do are replaced)

Prints, as JSON, one S3 lifecycle rule per recording retention period in use (RECORDING_RETENTION_DAYS and every
project's session_recording_retention_period_days): the packed objects under <prefix>packed/r<days>/ expire
<days> + 1 days after they were written, which is after every recording in them has expired. The purge deletes
packed objects too; the rules are a backstop that needs no listing. Run it again after a project's retention
changes: objects already written keep their prefix, so raising a retention does not lengthen the life of bytes
already packed under a shorter rule.`,
  'recordings pack': `Usage: node dist/cli.js recordings pack

Packs the snapshot chunks waiting in the database into packed objects of RECORDING_S3_BUCKET now (at most 10
objects of RECORDING_PACK_MAX_BYTES), as the service's packer does every RECORDING_PACK_INTERVAL_SECONDS: each
object is read back and checked by SHA-256 before its chunks point at it. Does nothing while another process
packs. Needs RECORDING_S3_BUCKET (and the store's AWS_* variables).`,
  orgs: `Usage: node dist/cli.js orgs <set-plugins-access> [options]

Organizations (operator actions):
  orgs set-plugins-access  Set an organization's plugins_access_level (9 lets it publish global plugins)

Run "node dist/cli.js orgs <command> --help" for a command's options.`,
  keys: `Usage: node dist/cli.js keys <create|list|revoke> [options]

Personal API keys:
  keys create   Create a personal API key (creates the user if missing)
  keys list     List a user's keys (masked)
  keys revoke   Revoke a key

Run "node dist/cli.js keys <command> --help" for a command's options.`,
  'keys create': `Usage: node dist/cli.js keys create --email E --scopes S [--label L] [--organizations uuid,...] [--projects id,...]

  --email          the key owner's e-mail; the user is created if missing
  --scopes         '*' or a comma list, e.g. organization:read,batch_export:write
  --label          a name for the key (at most 40 characters)
  --organizations  restrict the key to these organization ids
  --projects       restrict the key to these project ids

Prints the new secret once, as the last line of standard output.`,
  'keys list': `Usage: node dist/cli.js keys list --email E

Lists the user's keys: id, masked secret, scopes, restrictions, last use, revocation.`,
  'keys revoke': `Usage: node dist/cli.js keys revoke --id ID

Revokes the key with this id; requests with it get 401 at once.`,
  'orgs set-plugins-access': `Usage: node dist/cli.js orgs set-plugins-access --org ID --level N

  --org    the organization's id (uuid)
  --level  0 (no plugins), 3 (configure: use plugins in projects), 6 (install: manage the organization's own
           plugin records; the default for new organizations) or 9 (root: also publish global plugin records,
           visible to every organization)

Raising an organization to 9 is an operator decision: its admins and owners can then publish plugins that
every tenant sees. Lowering it leaves the records it already published global (the output says how many).`,
  migrate: `Usage: node dist/cli.js migrate

Applies pending migrations under a PostgreSQL advisory lock (safe to run from several replicas at once).`,
  demo: `Usage: node dist/cli.js demo --project ID [--sessions N] [--seed S]

  --project   the project (its id) that receives the recordings
  --sessions  how many sessions to generate (1-1000, default 20)
  --seed      a number that makes the generated content reproducible (default: random)

Generates realistic browser sessions (page loads, clicks, typing, scrolling, console messages, idle time) of a
few persons and ingests them through the capture code, as if posthog-js had sent them to POST /s/. Session ids
are new on every run, so running it again adds more recordings.`,
  'recordings purge': `Usage: node dist/cli.js recordings purge

Deletes every recording that has expired (started before its project's retention cutoff: the start of today,
UTC, minus session_recording_retention_period_days - 1, or RECORDING_RETENTION_DAYS - 1 when the project sets
none), soft-deleted ones included, with its snapshot chunks (rows and objects in the store), event keys, views
and sharing, in transactions of RECORDING_PURGE_BATCH_SIZE recordings, until none is left; then prints what it
deleted. Safe while the service runs and purges too: each recording is deleted once.`,
};

type Out = (line: string) => void;

/** The outcome line of `recordings purge`. */
export function describePurge(r: PurgeResult): string {
  if (!r.recordings) return 'nothing to purge: no recording has expired';
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const left = r.objectsLeft ? ` (${plural(r.objectsLeft, 'object')} left to the orphan sweep)` : '';
  return (
    `purged ${plural(r.recordings, 'expired recording')}: ${plural(r.snapshotChunks, 'snapshot chunk')}, ` +
    `${plural(r.objects, 'stored object')}${left}, in ${plural(r.batches, 'transaction')}`
  );
}

/** The outcome line of `migrate`: how many migrations this process applied, or that none was pending. */
export function describeMigrations(applied: string[]): string {
  if (!applied.length) return 'no pending migrations: the schema is up to date';
  return `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}: ${applied.join(', ')}`;
}

/** The recordings module for the `recordings` commands (purge, storage maintenance). */
@Module({})
class CliRecordingsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliRecordingsModule,
      imports: [
        CoreModule.forRoot(config),
        ClockModule,
        LoggerModule.forRoot({ pinoHttp: { level: 'silent' } }),
        DatabaseModule.forRoot(config),
        SessionRecordingsModule,
      ],
    };
  }
}

/** The capture pipeline for the demo command. */
@Module({})
class CliDemoModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliDemoModule,
      imports: [
        CoreModule.forRoot(config),
        ClockModule,
        LoggerModule.forRoot({ pinoHttp: { level: 'silent' } }),
        DatabaseModule.forRoot(config),
        ProjectsModule,
        CaptureModule,
      ],
    };
  }
}

/** Purge batches until one deletes nothing. */
function runPurge(config: AppConfig): Promise<PurgeResult> {
  return withApp(CliRecordingsModule.forRoot(config), async (app) => {
    const retention = app.get(RecordingRetentionService);
    let total: PurgeResult = { ...NOTHING_PURGED };
    for (;;) {
      const batch = await retention.purgeBatch();
      if (!batch.recordings) return total;
      total = addPurgeResults(total, batch);
    }
  });
}

@Module({})
class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        CoreModule.forRoot(config),
        ClockModule,
        LoggerModule.forRoot({ pinoHttp: { level: 'silent' } }),
        DatabaseModule.forRoot(config),
        PersonalApiKeysModule,
        PluginsModule,
      ],
    };
  }
}

function splitList(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

function parse(command: string, args: string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({
      args,
      options: { ...options, help: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | boolean | undefined>;
  } catch (err) {
    throw new CliUsageError(`${command}: ${(err as Error).message.split('\n')[0]}`);
  }
}

function required(values: Record<string, unknown>, name: string, command: string): string {
  const v = values[name];
  if (typeof v !== 'string' || !v.trim()) throw new CliUsageError(`${command}: --${name} is required`);
  return v.trim();
}

async function withApp<T>(
  module: DynamicModule,
  fn: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  const app: INestApplicationContext = await NestFactory.createApplicationContext(module, { logger: false });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

function withCli<T>(config: AppConfig, fn: (app: INestApplicationContext) => Promise<T>): Promise<T> {
  return withApp(CliModule.forRoot(config), fn);
}

function withKeys<T>(config: AppConfig, fn: (keys: PersonalApiKeysService) => Promise<T>): Promise<T> {
  return withCli(config, (app) => fn(app.get(PersonalApiKeysService)));
}

function withRecordingStorage<T>(
  config: AppConfig,
  fn: (maintenance: SnapshotStorageMaintenance) => Promise<T>,
): Promise<T> {
  return withApp(CliRecordingsModule.forRoot(config), (app) => fn(app.get(SnapshotStorageMaintenance)));
}

/** The outcome lines of `recordings migrate-storage`. */
export function describeMigration(r: MigrationReport): string {
  const where = `now ${r.counts.inDatabase} chunks in the database, ${r.counts.inObjectStore} in the object store`;
  const target = r.to === 's3' ? 'the object store' : r.to === 'packed' ? 'packed objects' : 'the database';
  const head = `moved ${r.moved} chunks (${r.bytes} bytes) to ${target}, each verified by checksum`;
  const skipped = r.skipped ? `; ${r.skipped} skipped (their source was gone)` : '';
  const left =
    r.to === 's3' ? r.counts.inDatabase : r.to === 'packed' ? (r.notPacked ?? 0) : r.counts.inObjectStore;
  const end = r.stopped
    ? `stopped before the end: ${left} left to move; run the command again to go on`
    : left
      ? `${left} chunks were added to the old backend meanwhile (is RECORDING_STORAGE still the old one?); run again to move them`
      : 'done: every chunk is there';
  return `${head}${skipped}\n${where}\n${end}`;
}

/** `--level` of `orgs set-plugins-access`: one of 0, 3, 6, 9. */
function pluginsAccessLevel(raw: string, command: string): number {
  const level = /^\d$/.test(raw) ? Number(raw) : NaN;
  if (!(PLUGINS_ACCESS_LEVELS as readonly number[]).includes(level)) {
    throw new CliUsageError(`${command}: --level must be one of ${PLUGINS_ACCESS_LEVELS.join(', ')}`);
  }
  return level;
}

/** Ingests generated sessions into a project through the capture service; returns a summary line. */
async function runDemo(
  config: AppConfig,
  projectId: number,
  sessions: number,
  seed: number | undefined,
): Promise<string> {
  const app = await NestFactory.createApplicationContext(CliDemoModule.forRoot(config), { logger: false });
  try {
    const project = await app.get(ProjectsService).findById(projectId);
    if (!project) throw new CliUsageError(`demo: no project with id ${projectId}`);
    const capture = app.get(CaptureService);
    const requests = demoCaptureRequests({ token: project.apiToken, sessions, now: Date.now(), seed });
    let stored = 0;
    for (const body of requests) stored += (await capture.captureJson(body)).stored;
    return (
      `created ${sessions} recordings (${stored} rrweb events, ${requests.length} capture requests) in project ` +
      `${project.id} "${project.name}"; list them: GET /api/projects/${project.id}/session_recordings/`
    );
  } finally {
    await app.close();
  }
}

function positiveInt(
  values: Record<string, unknown>,
  name: string,
  command: string,
  max: number,
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > max) {
    throw new CliUsageError(`${command}: --${name} must be an integer between 1 and ${max}`);
  }
  return Number(raw);
}

/** Command groups: the first word of every two-word command (`keys create` → `keys`). */
const GROUPS = new Set(
  Object.keys(HELP)
    .filter((name) => name.includes(' '))
    .map((name) => name.split(' ')[0]),
);
const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';

/** The command named by the start of `argv` (one word, or a group and its command) and the rest. */
function splitCommand(argv: string[]): { command: string; args: string[] } {
  const [first = '', second, ...rest] = argv;
  if (GROUPS.has(first) && second !== undefined && !second.startsWith('-') && !isHelp(second)) {
    return { command: `${first} ${second}`, args: rest };
  }
  return { command: first, args: argv.slice(1) };
}

/** Runs one CLI command; returns the exit code. Exposed for tests. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, out: Out, err: Out): Promise<number> {
  if (!argv.length) {
    out(HELP.main);
    return 2;
  }
  if (isHelp(argv[0])) {
    // `--help` alone, or `help <command>`.
    const topic = argv.length > 1 ? splitCommand(argv.slice(1)).command : 'main';
    if (!HELP[topic]) {
      err(`unknown command '${argv.slice(1).join(' ')}' (try --help)`);
      return 2;
    }
    out(HELP[topic]);
    return 0;
  }
  const { command, args } = splitCommand(argv);
  const asksHelp = args.some((a) => a === '--help' || a === '-h');
  if (GROUPS.has(command)) {
    // A group lists its commands: as the answer to `keys --help` (or `keys help`), as a usage error alone.
    if (asksHelp || isHelp(args[0])) {
      out(HELP[command]);
      return 0;
    }
    if (!args.length) {
      out(HELP[command]);
      return 2;
    }
  }
  if (!HELP[command] || command === 'main' || GROUPS.has(command)) {
    err(`unknown command '${argv.slice(0, GROUPS.has(argv[0]) ? 2 : 1).join(' ')}' (try --help)`);
    return 2;
  }
  if (asksHelp) {
    out(HELP[command]);
    return 0;
  }

  let database: ResolvedDatabase | undefined;
  try {
    const specs = {
      'keys create': {
        email: { type: 'string' },
        scopes: { type: 'string' },
        label: { type: 'string' },
        organizations: { type: 'string' },
        projects: { type: 'string' },
      },
      'keys list': { email: { type: 'string' } },
      'keys revoke': { id: { type: 'string' } },
      'orgs set-plugins-access': { org: { type: 'string' }, level: { type: 'string' } },
      migrate: {},
      'recordings purge': {},
      demo: { project: { type: 'string' }, sessions: { type: 'string' }, seed: { type: 'string' } },
      'recordings migrate-storage': { to: { type: 'string' }, 'max-chunks': { type: 'string' } },
      'recordings sweep-orphans': { all: { type: 'boolean' } },
      'recordings pack': {},
      'recordings lifecycle-rules': { apply: { type: 'boolean' } },
    } as const;
    const values = parse(command, args, specs[command as keyof typeof specs]);
    // Validate the arguments fully before touching the database.
    const projects = splitList(values.projects as string | undefined)?.map((p) => {
      if (!/^\d+$/.test(p)) throw new CliUsageError(`${command}: --projects: '${p}' is not a project id`);
      return Number(p);
    });
    if (command === 'keys create') {
      required(values, 'email', command);
      required(values, 'scopes', command);
    }
    if (command === 'keys list') required(values, 'email', command);
    if (command === 'keys revoke') required(values, 'id', command);
    if (command === 'orgs set-plugins-access') {
      if (!isUuid(required(values, 'org', command))) {
        throw new CliUsageError(`${command}: --org must be an organization id (a uuid)`);
      }
      pluginsAccessLevel(required(values, 'level', command), command);
    }
    const migrateTo = command === 'recordings migrate-storage' ? required(values, 'to', command) : null;
    if (migrateTo !== null && migrateTo !== 's3' && migrateTo !== 'postgres' && migrateTo !== 'packed') {
      throw new CliUsageError(`${command}: --to must be s3, packed or postgres`);
    }
    const maxChunks =
      command === 'recordings migrate-storage'
        ? positiveInt(values, 'max-chunks', command, Number.MAX_SAFE_INTEGER)
        : undefined;
    const demo =
      command === 'demo'
        ? {
            project: positiveInt(
              { project: required(values, 'project', command) },
              'project',
              command,
              2147483647,
            ),
            sessions: positiveInt(values, 'sessions', command, 1000) ?? 20,
            seed: positiveInt(values, 'seed', command, 2147483647),
          }
        : null;

    database = await resolveDatabase(AppConfig.fromEnv(env), () => undefined);
    const config = database.config;
    if (command === 'migrate' || config.embeddedDatabase) {
      // The embedded database is migrated on use too, so the CLI works before the first `npm start`.
      const ds = await createDataSource(config, 'cli-migrate').initialize();
      try {
        const applied = await runMigrations(ds, {
          onWait: () => out('waiting for a migration running in another process to finish'),
        });
        if (command === 'migrate') out(describeMigrations(applied));
      } finally {
        await ds.destroy();
      }
    }

    switch (command) {
      case 'migrate':
        return 0;
      case 'keys create': {
        const result = await withKeys(config, (keys) =>
          keys.create({
            email: required(values, 'email', command),
            scopes: required(values, 'scopes', command),
            label: values.label as string | undefined,
            organizations: splitList(values.organizations as string | undefined),
            projects,
          }),
        );
        out(
          `created key ${result.key.id} (${result.key.maskValue}) for ${required(values, 'email', command)}` +
            `${result.userCreated ? ' (new user)' : ''} with scopes ${result.key.scopes.join(',')}`,
        );
        out('the secret is shown only once:');
        out(result.secret);
        return 0;
      }
      case 'keys list': {
        const keys = await withKeys(config, (k) => k.listForEmail(required(values, 'email', command)));
        if (keys === null) throw new CliUsageError(`keys list: no user with e-mail ${String(values.email)}`);
        if (!keys.length) out('no keys');
        for (const k of keys) {
          out(
            [
              k.id,
              k.maskValue,
              `scopes=${k.scopes.join(',')}`,
              k.label ? `label=${k.label}` : null,
              k.scopedOrganizations ? `organizations=${k.scopedOrganizations.join(',')}` : null,
              k.scopedTeams ? `projects=${k.scopedTeams.join(',')}` : null,
              `last_used=${k.lastUsedAt?.toISOString() ?? 'never'}`,
              k.revokedAt ? `revoked=${k.revokedAt.toISOString()}` : 'active',
            ]
              .filter(Boolean)
              .join('  '),
          );
        }
        return 0;
      }
      case 'recordings purge':
        out(describePurge(await runPurge(config)));
        return 0;
      case 'demo': {
        const d = demo as { project: number; sessions: number; seed: number | undefined };
        out(await runDemo(config, d.project, d.sessions, d.seed));
        return 0;
      }
      case 'orgs set-plugins-access': {
        const org = required(values, 'org', command);
        const level = pluginsAccessLevel(required(values, 'level', command), command);
        const change = await withCli(config, (app) =>
          app.get(PluginsService).setOrganizationAccessLevel(org, level),
        );
        if (!change) throw new CliUsageError(`${command}: no organization with id ${org}`);
        out(
          `organization ${change.id} "${change.name}": plugins_access_level ${change.before} -> ${change.after}`,
        );
        if (change.after < 9 && change.globalPlugins > 0) {
          out(
            `note: it owns ${change.globalPlugins} global plugin record${change.globalPlugins === 1 ? '' : 's'}; ` +
              'they stay global (visible to every organization) and it can no longer change that',
          );
        }
        return 0;
      }
      case 'recordings migrate-storage': {
        let interrupted = false;
        const onSignal = () => {
          interrupted = true;
          err('interrupted: stopping after the current chunk');
        };
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        try {
          const report = await withRecordingStorage(config, (m) =>
            m.migrate(migrateTo as MigrationTarget, {
              maxChunks,
              shouldStop: () => interrupted,
              progress: (r) => out(`... ${r.moved} chunks moved (${r.bytes} bytes), ${r.skipped} skipped`),
            }),
          );
          out(describeMigration(report));
          return 0;
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      }
      case 'recordings sweep-orphans': {
        const report = await withRecordingStorage(config, (m) =>
          m.sweepOrphans({ all: values.all === true }),
        );
        out(
          report
            ? `looked at ${report.scanned} objects; deleted ${report.deleted} that no chunk points at`
            : 'another process is sweeping: nothing done',
        );
        return 0;
      }
      case 'recordings lifecycle-rules': {
        const { rules, kept } = await withRecordingStorage(config, (m) =>
          m.lifecycleRules(values.apply === true),
        );
        out(
          JSON.stringify(
            {
              Rules: rules.map((r) => ({
                ID: r.id,
                Status: 'Enabled',
                Filter: { Prefix: r.prefix },
                Expiration: { Days: r.expirationDays },
              })),
            },
            null,
            2,
          ),
        );
        if (values.apply === true) {
          out(`applied ${rules.length} rules to the bucket (kept ${kept.length} rules not managed here)`);
        }
        return 0;
      }
      case 'recordings pack': {
        const reports = await withApp(CliRecordingsModule.forRoot(config), (app) => {
          if (!app.get(SnapshotObjectStore).configured) {
            throw new CliUsageError('recordings pack: RECORDING_S3_BUCKET is not set');
          }
          return app.get(SnapshotPacker).packDue({ force: true });
        });
        if (!reports) out('another process is packing: nothing done');
        else {
          const chunks = reports.reduce((n, r) => n + r.chunks, 0);
          const bytes = reports.reduce((n, r) => n + r.bytes, 0);
          out(`packed ${chunks} chunks (${bytes} bytes) into ${reports.length} objects`);
        }
        return 0;
      }
      case 'keys revoke': {
        const id = required(values, 'id', command);
        const revoked = await withKeys(config, (k) => k.revoke(id));
        if (!revoked) throw new CliUsageError(`keys revoke: no active key with id ${id}`);
        out(`revoked key ${id}`);
        return 0;
      }
    }
    return 2;
  } catch (e) {
    if (e instanceof CliUsageError) {
      err(e.message);
      return 2;
    }
    if (e instanceof ConfigError) {
      err(e.message.replace(/\n\s*/g, ' '));
      return 2;
    }
    // Input the service rejects (unknown scope, bad label...) is a one-line error too.
    err(`${command}: ${(e as Error).message.split('\n')[0]}`);
    return 1;
  } finally {
    await database?.stop();
  }
}

const isEntryPoint = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntryPoint) {
  runCli(
    process.argv.slice(2),
    process.env,
    (l) => process.stdout.write(`${l}\n`),
    (l) => process.stderr.write(`${l}\n`),
  )
    .then((code) => process.exit(code))
    .catch((e: unknown) => {
      process.stderr.write(`${(e as Error).message}\n`);
      process.exit(1);
    });
}
