import { CliUsageError, plural, positiveInt, required } from '../common/cli/cli-args.js';
import type { CliCommand, CliGroup } from '../common/feature/feature.js';
import type { PurgeResult } from './retention/recording-retention.service.js';
import type { MigrationReport, MigrationTarget } from './storage/snapshot-storage-maintenance.js';

export const RECORDINGS_GROUP: CliGroup = {
  name: 'recordings',
  title: 'Session recordings (operator actions)',
};

/** The outcome line of `recordings purge`. */
export function describePurge(r: PurgeResult): string {
  if (!r.recordings) return 'nothing to purge: no recording has expired';
  const left = r.objectsLeft ? ` (${plural(r.objectsLeft, 'object')} left to the orphan sweep)` : '';
  return (
    `purged ${plural(r.recordings, 'expired recording')}: ${plural(r.snapshotChunks, 'snapshot chunk')}, ` +
    `${plural(r.objects, 'stored object')}${left}, in ${plural(r.batches, 'transaction')}`
  );
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

/** The recordings module and a service of it, loaded when a command runs. */
async function recordingsModule() {
  const [{ SessionRecordingsModule }, retention, storage, store, packer] = await Promise.all([
    import('./session-recordings.module.js'),
    import('./retention/recording-retention.service.js'),
    import('./storage/snapshot-storage-maintenance.js'),
    import('./storage/snapshot-object-store.js'),
    import('./storage/snapshot-packer.js'),
  ]);
  return { SessionRecordingsModule, ...retention, ...storage, ...store, ...packer };
}

export const RECORDINGS_COMMANDS: CliCommand[] = [
  {
    name: 'recordings purge',
    summary: 'Delete expired session recordings now',
    description:
      "Deletes every recording that has expired (started before its project's retention cutoff: the start of today,\n" +
      'UTC, minus session_recording_retention_period_days - 1, or RECORDING_RETENTION_DAYS - 1 when the project sets\n' +
      'none), soft-deleted ones included, with its snapshot chunks (rows and objects in the store), event keys, views\n' +
      'and sharing, in transactions of RECORDING_PURGE_BATCH_SIZE recordings, until none is left; then prints what it\n' +
      'deleted. Safe while the service runs and purges too: each recording is deleted once.',
    async run({ out, withModules }) {
      const m = await recordingsModule();
      // Purge batches until one deletes nothing.
      const result = await withModules([m.SessionRecordingsModule], async (app) => {
        const retention = app.get(m.RecordingRetentionService);
        let total: PurgeResult = { ...m.NOTHING_PURGED };
        for (;;) {
          const batch = await retention.purgeBatch();
          if (!batch.recordings) return total;
          total = m.addPurgeResults(total, batch);
        }
      });
      out(describePurge(result));
      return 0;
    },
  },
  {
    name: 'recordings migrate-storage',
    summary: 'Move snapshot chunks between the database and the object store',
    synopsis: '--to s3|packed|postgres [--max-chunks N]',
    options: {
      to: {
        type: 'string',
        help:
          's3: move every chunk stored in the database into RECORDING_S3_BUCKET, one object each;\n' +
          'packed: move every chunk stored in the database or as an object of its own into packed\n' +
          'objects (many chunks each, read by byte range);\n' +
          'postgres: move every chunk stored as an object (either layout) or waiting to be packed back\n' +
          'into the database',
      },
      'max-chunks': {
        type: 'string',
        help: 'stop after this many chunks (the rest stay where they are; run again to go on)',
      },
    },
    description:
      'Moves one chunk at a time (to packed: a page of chunks per object), each verified before its source is\n' +
      "dropped: the SHA-256 of what was written, read back, must equal the source's. Progress is kept in the chunks themselves, so an interrupted run (Ctrl-C stops\n" +
      'after the current chunk) resumes when started again. Prints how many chunks each backend holds at the end.\n' +
      'Capture may run meanwhile; set RECORDING_STORAGE to the new backend first so new chunks go there.\n' +
      "Needs RECORDING_S3_BUCKET (and the store's AWS_* variables) in both directions.",
    validate(values, command) {
      const to = required(values, 'to', command);
      if (to !== 's3' && to !== 'postgres' && to !== 'packed')
        throw new CliUsageError(`${command}: --to must be s3, packed or postgres`);
      positiveInt(values, 'max-chunks', command, Number.MAX_SAFE_INTEGER);
    },
    async run({ values, command, out, err, withModules }) {
      const to = required(values, 'to', command) as MigrationTarget;
      const maxChunks = positiveInt(values, 'max-chunks', command, Number.MAX_SAFE_INTEGER);
      const m = await recordingsModule();
      let interrupted = false;
      const onSignal = () => {
        interrupted = true;
        err('interrupted: stopping after the current chunk');
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const report = await withModules([m.SessionRecordingsModule], (app) =>
          app.get(m.SnapshotStorageMaintenance).migrate(to, {
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
    },
  },
  {
    name: 'recordings sweep-orphans',
    summary: 'Delete objects of the recording store that no snapshot chunk points at',
    synopsis: '[--all]',
    options: {
      all: { type: 'boolean', help: 'list the whole prefix, also with RECORDING_S3_LAYOUT=packed' },
    },
    description:
      'Deletes the objects under RECORDING_S3_PREFIX that no snapshot chunk points at and that are older than\n' +
      'RECORDING_ORPHAN_GRACE_MINUTES (left by captures that failed after their upload, packer passes that died\n' +
      'after theirs, or deleted organizations). With RECORDING_STORAGE=s3 and RECORDING_S3_LAYOUT=packed it lists\n' +
      'only the packed objects of the last days (packed/<day>/), unless --all. The service does the same (without\n' +
      '--all) every RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS.',
    async run({ values, out, withModules }) {
      const m = await recordingsModule();
      const report = await withModules([m.SessionRecordingsModule], (app) =>
        app.get(m.SnapshotStorageMaintenance).sweepOrphans({ all: values.all === true }),
      );
      out(
        report
          ? `looked at ${report.scanned} objects; deleted ${report.deleted} that no chunk points at`
          : 'another process is sweeping: nothing done',
      );
      return 0;
    },
  },
  {
    name: 'recordings pack',
    summary: 'Pack the chunks waiting in the database into objects now',
    description:
      'Packs the snapshot chunks waiting in the database into packed objects of RECORDING_S3_BUCKET now (at most 10\n' +
      "objects of RECORDING_PACK_MAX_BYTES), as the service's packer does every RECORDING_PACK_INTERVAL_SECONDS: each\n" +
      'object is read back and checked by SHA-256 before its chunks point at it. Does nothing while another process\n' +
      "packs. Needs RECORDING_S3_BUCKET (and the store's AWS_* variables).",
    async run({ out, withModules }) {
      const m = await recordingsModule();
      const reports = await withModules([m.SessionRecordingsModule], (app) => {
        if (!app.get(m.SnapshotObjectStore).configured) {
          throw new CliUsageError('recordings pack: RECORDING_S3_BUCKET is not set');
        }
        return app.get(m.SnapshotPacker).packDue({ force: true });
      });
      if (!reports) out('another process is packing: nothing done');
      else {
        const chunks = reports.reduce((n, r) => n + r.chunks, 0);
        const bytes = reports.reduce((n, r) => n + r.bytes, 0);
        out(`packed ${chunks} chunks (${bytes} bytes) into ${reports.length} objects`);
      }
      return 0;
    },
  },
  {
    name: 'recordings lifecycle-rules',
    summary: 'Print (or apply) the bucket lifecycle rules that expire packed objects',
    synopsis: '[--apply]',
    options: {
      apply: {
        type: 'boolean',
        help:
          "write the rules into RECORDING_S3_BUCKET's lifecycle configuration (rules whose ID does not start\n" +
          'with recordings-packed- are kept; those that do are replaced)',
      },
    },
    description:
      'Prints, as JSON, one S3 lifecycle rule per recording retention period in use (RECORDING_RETENTION_DAYS and every\n' +
      "project's session_recording_retention_period_days): the packed objects under <prefix>packed/r<days>/ expire\n" +
      '<days> + 1 days after they were written, which is after every recording in them has expired. The purge deletes\n' +
      "packed objects too; the rules are a backstop that needs no listing. Run it again after a project's retention\n" +
      'changes: objects already written keep their prefix, so raising a retention does not lengthen the life of bytes\n' +
      'already packed under a shorter rule.',
    async run({ values, out, withModules }) {
      const m = await recordingsModule();
      const apply = values.apply === true;
      const { rules, kept } = await withModules([m.SessionRecordingsModule], (app) =>
        app.get(m.SnapshotStorageMaintenance).lifecycleRules(apply),
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
      if (apply)
        out(`applied ${rules.length} rules to the bucket (kept ${kept.length} rules not managed here)`);
      return 0;
    },
  },
];
