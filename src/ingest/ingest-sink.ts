import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { Feature } from '../common/feature/feature.js';
import type { RequestDeadline } from '../common/http/request-deadline.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import type { CaptureBatch, CaptureEvent } from './capture-events.js';
import type { DroppedValues } from './capture-text.js';

/**
 * The capture endpoints a request came through: PostHog's analytics capture (`/e/`, `/i/v0/e/`, `/batch/`,
 * `/capture/`, `/track/`) or its recording capture (`/s/`).
 */
export type IngestEndpoint = 'events' | 'recordings';

/** When and from where the request was received (the analytics routes correct the events' clock with it). */
export interface IngestReceipt {
  now: Date;
  /** The client's address. */
  ip: string | null;
  /** The request's `_` query parameter (posthog-js's send time, milliseconds). */
  querySentAt?: unknown;
}

/** What a sink gets of one decoded, token-checked request. */
export interface IngestRequest {
  project: ProjectEntity;
  endpoint: IngestEndpoint;
  received: IngestReceipt;
  /** What the body said of the batch as a whole (`sent_at`, `historical_migration`, no bad text). */
  batch: Pick<CaptureBatch, 'sentAt' | 'historicalMigration' | 'withoutBadText'>;
  /**
   * The events this sink takes (`takes`), in the request's order. The sink empties the list once it has read
   * them, so that the decoded events can be collected while the request is stored; it does not change them (an
   * event taken by two sinks is the same object).
   */
  events: CaptureEvent[];
  /** Values that cannot be stored (NUL, lone surrogates) the sink dropped: the pipeline logs them once. */
  dropped: DroppedValues;
  /** The request's REQUEST_TIMEOUT_MS: its work stops at its next step once it has passed. */
  deadline: RequestDeadline | null;
  /** Charges (or, negative, gives back) memory the sink holds beyond the decoded body, to the request's budget. */
  hold(bytes: number): Promise<void>;
}

/** What a sink stores of one request, run by the pipeline inside the request's one transaction. */
export interface SinkWrite {
  /**
   * Stores the sink's part. It runs inside the transaction the pipeline opened (the repositories' statements join
   * it without being told, src/database/transactions.ts), after the writes of the sinks before it, and may run
   * again when that transaction is lost to a deadlock or serialization failure.
   */
  write(): Promise<void>;
  /**
   * The transaction failed (`beforeCommit`: before COMMIT was sent, so nothing of it committed): undo what the
   * write did outside the database (objects it uploaded). True asks for one more attempt (the sink repaired what
   * failed: a partition another replica dropped).
   */
  failed?(error: unknown, beforeCommit: boolean): Promise<boolean>;
  /** The transaction committed. */
  committed?(): void;
  /** What the sink stored, for the caller (the demo command counts the rrweb events). */
  result?(): unknown;
}

/**
 * A feature's part of ingestion: which events of a request it takes and how it stores them. A feature declares
 * its sinks in its manifest (`sinks`); the pipeline (src/ingest/ingest-pipeline.ts) finds each as a provider of
 * the feature's modules, so a new sink needs no edit of src/ingest/.
 */
export interface IngestSink {
  /** Whether the sink takes this event of a request that came through `endpoint`. */
  takes(entry: CaptureEvent, endpoint: IngestEndpoint): boolean;
  /**
   * Reads and checks the sink's events before any transaction (a 4xx it throws refuses the whole request,
   * nothing stored) and returns what it will store, or null when nothing.
   */
  prepare(request: IngestRequest): Promise<SinkWrite | null>;
}

/** The features whose manifests' `sinks` the pipeline uses. */
export const INGEST_FEATURES = Symbol('INGEST_FEATURES');

/** Provides the features' list to the pipeline (AppModule and the CLI's application context import it). */
@Global()
@Module({})
export class IngestFeaturesModule {
  static forRoot(features: readonly Pick<Feature, 'name' | 'sinks'>[]): DynamicModule {
    return {
      module: IngestFeaturesModule,
      providers: [{ provide: INGEST_FEATURES, useValue: features }],
      exports: [INGEST_FEATURES],
    };
  }
}

/** True when `value` has the methods of an IngestSink. */
export function isIngestSink(value: unknown): value is IngestSink {
  const sink = value as Partial<IngestSink> | null;
  return typeof sink?.takes === 'function' && typeof sink.prepare === 'function';
}
