/** What the batch export runs repository hands out and reads (batch-export-runs.repository.ts). */
import type { RunStatus } from '../batch-export-run.entity.js';
import type { BatchExportModel } from '../batch-export.entity.js';
import type { Config, DestinationType } from '../destinations.js';
import type { IncrementalMode, StoredIncremental } from '../incremental.js';
import type { RunAttempt } from './run-queue.js';

/** A run claimed by a worker, with what delivering it needs (the config with its secrets). */
export interface ClaimedRun {
  attempt: RunAttempt;
  /** 1 for the first attempt. */
  attemptNumber: number;
  run: {
    id: string;
    batchExportId: string;
    backfillId: string | null;
    dataIntervalStart: Date;
    dataIntervalEnd: Date;
    /** Scheduled runs: the transaction ids read by (`ExportWatermark`); null for backfill runs. */
    readXidFrom: string | null;
    readXidTo: string | null;
    /** Scheduled runs: the rows read late are stamped before this (`ExportLateBefore`); null: the start. */
    readLateBefore: Date | null;
  };
  batchExport: {
    id: string;
    organizationId: string;
    teamId: number;
    name: string;
    model: BatchExportModel;
    destinationType: DestinationType;
    config: Config;
    /** The export's `incremental_mode`, `primary_key` and `version_key` as saved. */
    incremental: StoredIncremental;
  };
}

export type ClaimResult =
  | { kind: 'none' }
  /** A job whose run had ended (or whose export is gone): settled, nothing to deliver. */
  | { kind: 'settled' }
  /** The export is paused: the job went back to the queue. */
  | { kind: 'paused'; batchExportId: string }
  /** The run had used its attempts (its workers were lost): recorded FailedRetryable. */
  | ({ kind: 'gave-up' } & LostRun)
  /** The run's organization, project or user has its cap of runs executing: the job went back to the queue, untouched. */
  | { kind: 'over-cap'; batchExportId: string; key: 'organization' | 'project' | 'user' }
  | { kind: 'claimed'; claim: ClaimedRun };

/** A run recorded FailedRetryable because its workers were lost. */
export type LostRun = { runId: string; destinationType: DestinationType };
export type DeadRow = Pick<ClaimRow, 'id' | 'batch_export_id' | 'destination_type'>;

export type RunOutcome =
  | { kind: 'completed'; records: number; bytes: number }
  | { kind: 'failed'; message: string; retryable: boolean }
  | { kind: 'stopped'; reason: 'cancelled' | 'shutdown' | 'lost' };

export interface FinishResult {
  /** The run's status afterwards (Running while a retry is pending). */
  status: RunStatus;
  /** Set when this failure paused the export (PostHog's auto-pause). */
  autoPaused: { failures: number } | null;
}

export interface ClaimRow {
  id: string;
  status: RunStatus;
  batch_export_id: string;
  backfill_id: string | null;
  data_interval_start: Date;
  data_interval_end: Date;
  read_xid_from: string | null;
  read_xid_to: string | null;
  read_late_before: Date | null;
  organization_id: string;
  team_id: number;
  fairness_user_id: number | null;
  name: string;
  model: BatchExportModel;
  destination_type: DestinationType;
  destination_config: Config;
  destination_secrets: Config;
  incremental_mode: IncrementalMode;
  primary_key: string[] | null;
  version_key: string[] | null;
  paused: boolean;
  deleted_at: Date | null;
}
