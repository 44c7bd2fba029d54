import { defineFeature, fixtureText } from '../common/feature/feature.js';
import { BATCH_EXPORTS_SETTINGS } from './batch-exports.settings.js';
import { FILE_EXPORTS_SETTINGS } from './file-exports/file-exports.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    batch_export: true;
    export: true;
  }
}

const HOUR_MS = 3_600_000;

/** A batch export the tests' tenants hold: hourly, to S3. */
const fixtureExport = () => ({
  name: fixtureText('Export '),
  interval: 'hour',
  destination: {
    type: 'AwsS3',
    config: {
      bucket_name: 'bucket',
      region: 'eu-west-1',
      prefix: 'events/',
      aws_access_key_id: 'AKIAEXAMPLE',
      aws_secret_access_key: 'secret',
    },
  },
});

/** A backfill of one hour, two hours back. */
const fixtureBackfill = (now: Date) => {
  const hour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return {
    start_at: new Date(hour - 3 * HOUR_MS).toISOString(),
    end_at: new Date(hour - 2 * HOUR_MS).toISOString(),
  };
};

/**
 * A file export of the project's persons over the day before `now`: a file every viewer may download (a `sessions`
 * or `events` file made by another user is refused to a member the recording access rules restrict).
 */
const fixtureFileExport = (now: Date) => ({
  export_format: 'JSONLines',
  export_context: {
    model: 'persons',
    start_at: new Date(now.getTime() - 24 * HOUR_MS).toISOString(),
    end_at: now.toISOString(),
  },
});

/** The batch exports feature: what it contributes to the application, the database, the CLI and the tests. */
export const BATCH_EXPORTS_FEATURE = defineFeature({
  name: 'batch-exports',
  e2e: [
    'batch-export-activity-log',
    'batch-export-deadlines',
    'batch-export-events',
    'batch-export-fairness',
    'batch-export-faults',
    'batch-export-late-commits',
    'batch-export-memory-process',
    'batch-export-merges',
    'batch-export-redshift-staging',
    'batch-export-runs',
    'batch-exports-project-paths',
    'batch-exports-scheduler',
    'batch-exports',
    'file-exports',
    'file-exports-memory-process',
  ],
  load: async () => ({
    modules: [
      (await import('./batch-exports.module.js')).BatchExportsModule,
      (await import('./file-exports/file-exports.module.js')).FileExportsModule,
    ],
    entities: [
      (await import('./batch-export.entity.js')).BatchExportEntity,
      (await import('./batch-export-backfill.entity.js')).BatchExportBackfillEntity,
      (await import('./batch-export-run.entity.js')).BatchExportRunEntity,
      (await import('./batch-export-pause.entity.js')).BatchExportPauseEntity,
      (await import('./batch-export-log.entity.js')).BatchExportLogEntity,
      (await import('./file-exports/file-export.entity.js')).FileExportEntity,
    ],
    migrations: [
      (await import('./migrations/1795242232741-BatchExports.js')).BatchExports1795242232741,
      (await import('./migrations/1795244538930-BatchExportRunIndexes.js'))
        .BatchExportRunIndexes1795244538930,
      (await import('./migrations/1795467963056-BatchExportFilters.js')).BatchExportFilters1795467963056,
      (await import('./migrations/1795473000000-BatchExportRuns.js')).BatchExportRuns1795473000000,
      // The transaction-id watermark of export reads, on the tables the export models read (export-cursor.ts).
      (await import('./migrations/1795807561520-ExportWatermark.js')).ExportWatermark1795807561520,
      // Who created an export: the user its runs count against in the workers' fair sharing.
      (await import('./migrations/1795941684165-BatchExportCreatedBy.js')).BatchExportCreatedBy1795941684165,
      // Where a scheduled run's late reads stop, so a gap (pause, schedule change) loses no late write.
      (await import('./migrations/1795950000000-ExportLateBefore.js')).ExportLateBefore1795950000000,
      (await import('./migrations/1797700000000-ExportZonesAndProgress.js'))
        .ExportZonesAndProgress1797700000000,
      // PostHog's incremental modes: `incremental_mode`, `primary_key`, `version_key`.
      (await import('./migrations/1798100000000-ExportIncrementalModes.js'))
        .ExportIncrementalModes1798100000000,
      // Failure notifications (webhook, daily e-mail limit) and the lag metric's last completed interval.
      (await import('./migrations/1798200000000-ExportNotifications.js')).ExportNotifications1798200000000,
      // Exports saved before use_automatic_schema_evolution keep adding the model's missing columns.
      (await import('./migrations/1798300000000-KeepSchemaEvolution.js')).KeepSchemaEvolution1798300000000,
      // On-demand file exports (PostHog's exports API for the export models).
      (await import('./file-exports/migrations/1798400000000-FileExports.js')).FileExports1798400000000,
    ],
  }),
  // `export`: PostHog's scope of its exports API (file exports).
  scopes: ['batch_export', 'export'],
  settings: { ...BATCH_EXPORTS_SETTINGS, ...FILE_EXPORTS_SETTINGS },
  tasks: [
    {
      name: 'batch-exports-scheduler',
      interval: 'SCHEDULER_TICK_SECONDS',
      description: 'Creates the due runs of every batch export (off with SCHEDULER_ENABLED=false).',
      handler: async () => (await import('./batch-exports.scheduler.js')).BatchExportsScheduler,
    },
    {
      name: 'file-exports-expiry',
      interval: 'FILE_EXPORT_EXPIRY_INTERVAL_SECONDS',
      description: 'Removes the file exports past their `expires_after`: their objects, then their rows.',
      handler: async () => (await import('./file-exports/file-exports.expiry.js')).FileExportsExpiry,
    },
  ],
  testFixture: {
    async create({ request, organizationId, projectId, now }) {
      const base = `/api/organizations/${organizationId}/batch_exports`;
      const batchExport = await request<{ id: string }>('post', base, fixtureExport());
      await request('post', `${base}/${batchExport.id}/backfill`, fixtureBackfill(now));
      const runs = await request<{ results: { id: string }[] }>('get', `${base}/${batchExport.id}/runs`);
      const fileExport = await request<{ id: string }>(
        'post',
        `/api/projects/${projectId}/exports`,
        fixtureFileExport(now),
      );
      return { batch_exports: batchExport.id, run_id: runs.results[0].id, exports: fileExport.id };
    },
    bodies: {
      BatchExportsController_create: fixtureExport,
      BatchExportsController_backfill: ({ now }) => fixtureBackfill(now),
      ProjectBatchExportsController_create: fixtureExport,
      ProjectBatchExportsController_backfill: ({ now }) => fixtureBackfill(now),
      FileExportsController_create: ({ now }) => fixtureFileExport(now),
    },
  },
});
