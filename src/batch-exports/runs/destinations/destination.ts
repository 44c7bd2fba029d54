import type { Readable } from 'node:stream';
import type { Config, DestinationType } from '../../destinations.js';
import type { EgressPolicy } from '../egress.js';
import type { ExportModel, ExportRow } from '../export-models.js';
import type { IncrementalSettings } from '../../incremental.js';

export type RunLogLevel = 'INFO' | 'WARNING' | 'ERROR';

/** What a destination writer knows of the run it delivers. */
export interface DeliveryContext {
  runId: string;
  /** 1 for the run's first attempt. */
  attempt: number;
  /**
   * Of these run id suffixes (the last 16 hex digits of a run id, as staging tables are named), those of
   * the project's runs that have ended: a staging table of theirs is stale.
   */
  endedRuns(suffixes: readonly string[]): Promise<ReadonlySet<string>>;
  teamId: number;
  dataIntervalStart: Date;
  dataIntervalEnd: Date;
  model: ExportModel;
  /**
   * Table destinations: the key one stored row stands for and the versions that replace it (the export's
   * `incremental_mode`, `primary_key` and `version_key`, resolved against the model).
   */
  incremental: IncrementalSettings;
  type: DestinationType;
  /** The whole config, secrets included (never logged). */
  config: Config;
  egress: EgressPolicy;
  /** Aborted when the run is cancelled or the worker stops: writers pass it to their I/O. */
  signal: AbortSignal;
  /** Adds a line to the run's log (shown by the logs endpoint). */
  log(level: RunLogLevel, message: string): Promise<void>;
  /** `timeoutMs`: the total deadline of one request, from connecting to the answer's last byte. */
  http: { maxRetries: number; retryDelayMs: number; timeoutMs: number };
  /** Longest one statement may run on a PostgreSQL or Redshift destination. */
  statementTimeoutMs: number;
  /** Production refuses public destinations without TLS where TLS is optional (PostgreSQL). */
  production: boolean;
}

/**
 * Delivers one run's rows: `open`, then `write` for each page in order, then `finish` (which makes them
 * visible at the destination, once: merges, completes uploads). `close` is always called last, after a
 * success or a failure, and releases connections. A writer must deliver a retried run without duplicates.
 */
export interface DestinationWriter {
  open(): Promise<void>;
  write(rows: readonly ExportRow[]): Promise<void>;
  /**
   * Optional, instead of `write`: loads the rows from a stream of COPY text in the model's column order
   * (PostgreSQL's own format, passed through without parsing). Returns the records loaded.
   */
  copyStream?(rows: Readable): Promise<{ records: number }>;
  /** Returns the bytes delivered. */
  finish(): Promise<{ bytes: number }>;
  close(): Promise<void>;
}
