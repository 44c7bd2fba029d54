import { defineFeature } from '../common/feature/feature.js';
import { BatchExports1795242232741 } from '../database/migrations/1795242232741-BatchExports.js';
import { BatchExportRunIndexes1795244538930 } from '../database/migrations/1795244538930-BatchExportRunIndexes.js';
import { BatchExportFilters1795467963056 } from '../database/migrations/1795467963056-BatchExportFilters.js';
import { BatchExportRuns1795473000000 } from '../database/migrations/1795473000000-BatchExportRuns.js';
import { BatchExportBackfillEntity } from './batch-export-backfill.entity.js';
import { BatchExportLogEntity } from './batch-export-log.entity.js';
import { BatchExportPauseEntity } from './batch-export-pause.entity.js';
import { BatchExportRunEntity } from './batch-export-run.entity.js';
import { BatchExportEntity } from './batch-export.entity.js';
import { BatchExportsModule } from './batch-exports.module.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    batch_export: true;
  }
}

/** The batch exports feature: what it contributes to the application, the database, the CLI and the tests. */
export const BATCH_EXPORTS_FEATURE = defineFeature({
  name: 'batch-exports',
  modules: [BatchExportsModule],
  entities: [
    BatchExportEntity,
    BatchExportBackfillEntity,
    BatchExportRunEntity,
    BatchExportPauseEntity,
    BatchExportLogEntity,
  ],
  migrations: [
    BatchExports1795242232741,
    BatchExportRunIndexes1795244538930,
    BatchExportFilters1795467963056,
    BatchExportRuns1795473000000,
  ],
  scopes: ['batch_export'],
  settings: [
    'SCHEDULER_ENABLED',
    'SCHEDULER_TICK_SECONDS',
    'SCHEDULER_MAX_CATCHUP',
    'BACKFILL_MAX_RUNS',
    'BATCH_EXPORT_WORKERS',
    'BATCH_EXPORT_WORKER_CONCURRENCY',
    'BATCH_EXPORT_POLL_INTERVAL_MS',
    'BATCH_EXPORT_MAX_ATTEMPTS',
    'BATCH_EXPORT_RETRY_DELAY_SECONDS',
    'BATCH_EXPORT_HEARTBEAT_SECONDS',
    'BATCH_EXPORT_SUPERVISE_SECONDS',
    'BATCH_EXPORT_DRAIN_TIMEOUT_MS',
    'BATCH_EXPORT_PAGE_SIZE',
    'BATCH_EXPORT_HTTP_MAX_RETRIES',
    'BATCH_EXPORT_HTTP_RETRY_DELAY_MS',
    'BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS',
  ],
  tasks: [
    {
      name: 'batch export scheduler',
      interval: 'SCHEDULER_TICK_SECONDS',
      description: 'Creates the due runs of every batch export (off with SCHEDULER_ENABLED=false).',
    },
  ],
});
