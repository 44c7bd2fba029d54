import { Injectable, Logger, Optional } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { isForeignKeyViolation } from '../common/errors/database-errors.js';
import { ReadinessChecks } from '../common/health/readiness-checks.js';
import { RequestBodyStream } from '../common/http/raw-body.middleware.js';
import type { RequestDeadline } from '../common/http/request-deadline.js';
import { AppConfig } from '../config/config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { ProjectsService } from '../projects/projects.service.js';
import {
  type IngestResult,
  RecordingIngestionService,
} from '../session-recordings/ingestion/recording-ingestion.service.js';
import type { JsonLimits } from './bounded-json.js';
import { type CaptureBody, decodeCaptureBody, type DecodeHooks } from './capture-body.js';
import {
  batchTokenOf,
  type CaptureBatch,
  readCaptureBatch,
  readSnapshotEvents,
  type SnapshotBatch,
  type SnapshotReadLimits,
  tokenOf,
} from './capture-events.js';
import { CaptureMemoryBudget, weightOf } from './capture-memory-budget.js';
import { DroppedValues, isLookupableToken } from './capture-text.js';

const noToken = () =>
  new ApiError(
    401,
    'not_authenticated',
    "No project API key found: send the project's token as the event's 'token' (or '$token', 'api_key', 'properties.token').",
    'token',
  );
const invalidToken = () =>
  new ApiError(
    401,
    'authentication_failed',
    'Project API key invalid. You can find your project API key in your project settings.',
    'token',
  );

/**
 * What the analytics capture routes (`/e/`, `/batch/`, …, src/events) do with the events of a request other than
 * `$snapshot`: called with the project and the decoded batch, under the request's memory budget, before the
 * snapshots are stored. `/s/` passes none (it ignores other events).
 */
export type OtherEventsSink = (
  project: ProjectEntity,
  batch: CaptureBatch,
  dropped: DroppedValues,
  /** Charges (or, negative, gives back) memory the sink holds beyond the decoded body, to the request's budget. */
  hold: (bytes: number) => Promise<void>,
  /**
   * Stores the rest of the request (its `$snapshot` events): the sink runs it inside its own transaction before
   * that commits, so that the request commits whole or not at all (or on its own when the sink stores nothing).
   */
  alongside: () => Promise<void>,
) => Promise<void>;

/** The project lookup started as soon as the token is known, settled without ever rejecting. */
interface EarlyLookup {
  token: string;
  result: Promise<{ project: ProjectEntity | null } | { error: unknown }>;
  settled: { project: ProjectEntity | null } | { error: unknown } | null;
}

/**
 * The capture protocol: decodes a request body within the public path's limits, checks the project token as
 * soon as the first event is decoded (the rest of the body is then not read for an unknown one), validates the
 * `$snapshot` events and hands them to recording ingestion.
 */
/**
 * Whether an error capture raised is answered only once the rest of the body has been read: a 4xx refusing the
 * request itself, not the memory budget's 503, a size past a limit (413) or the per-address cap (429).
 */
export function answeredAfterBody(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  const status = error.getStatus();
  return status >= 400 && status < 500 && status !== 413 && status !== 429;
}

@Injectable()
export class CaptureService {
  private readonly logger = new Logger(CaptureService.name);
  private readonly limits: JsonLimits;
  private readonly readLimits: SnapshotReadLimits;

  constructor(
    config: AppConfig,
    private readonly projects: ProjectsService,
    private readonly ingestion: RecordingIngestionService,
    private readonly budget: CaptureMemoryBudget,
    @Optional() metrics?: MetricsService,
    @Optional() readiness?: ReadinessChecks,
  ) {
    this.limits = {
      maxBytes: config.get('RECORDING_BODY_LIMIT'),
      maxDepth: config.get('PUBLIC_JSON_MAX_DEPTH'),
      maxValues: config.get('PUBLIC_JSON_MAX_VALUES'),
      maxKeys: config.get('PUBLIC_JSON_MAX_KEYS'),
      maxEvents: config.get('CAPTURE_MAX_EVENTS'),
      maxSnapshotEvents: config.get('CAPTURE_MAX_SNAPSHOT_EVENTS'),
      maxSetValues: config.get('PERSON_SET_MAX_KEYS'),
    };
    this.readLimits = {
      maxSessions: config.get('CAPTURE_MAX_SESSIONS'),
      set: { maxKeys: config.get('PERSON_SET_MAX_KEYS'), maxBytes: config.get('PERSON_SET_MAX_BYTES') },
    };
    metrics?.setCaptureBudgetReader(() => ({
      inUse: this.budget.inUse,
      capacity: this.budget.capacity,
      exhaustedSeconds: this.budget.exhaustedForMs() / 1000,
    }));
    // Every request gives its charge back by its deadline: a budget exhausted for longer than that is stuck,
    // and the replica is taken out of service rather than answering every capture 503.
    const stuckMs = 2 * config.get('REQUEST_TIMEOUT_MS');
    readiness?.register(() =>
      this.budget.exhaustedForMs() > stuckMs
        ? `The capture memory budget has been exhausted for more than ${stuckMs} ms.`
        : null,
    );
  }

  /**
   * `deadline`: the request's REQUEST_TIMEOUT_MS; once it has passed nothing of the request is committed.
   * `others`: where the events other than `$snapshot` go (the analytics capture routes); without it they are ignored.
   */
  async capture(
    body: CaptureBody & { discard?(): Promise<void> | void },
    deadline: RequestDeadline | null = null,
    others?: OtherEventsSink,
  ): Promise<IngestResult> {
    const reservation = this.budget.open();
    // Abandoned (the deadline fired, the connection closed): the budget is given back at once, whatever the
    // decoder awaits (the body, the budget itself), and the body stops, so the decoder ends.
    const signal = deadline?.signal;
    // The rest of a body not decoded: read and dropped, or, while memory is short, not read at all (the
    // connection closes after the answer).
    const letGo = (): Promise<void> | void => {
      if (this.budget.underPressure && body.stream instanceof RequestBodyStream) return body.stream.refuse();
      return body.discard?.();
    };
    const abandon = () => {
      reservation.release(signal?.reason ?? new Error('abandoned'));
      void letGo();
    };
    if (signal?.aborted) abandon();
    else signal?.addEventListener('abort', abandon, { once: true });
    let drainFirst = false;
    let early: EarlyLookup | null = null;
    // The estimate of what the request holds: what it parsed, and the bytes it holds outside the parser.
    let parsed = 0;
    let held = 0;
    // Bytes held outside the parser: received bytes collected, their copies, and the events sink's rows.
    const hold = async (bytes: number) => {
      held = Math.max(0, held + bytes);
      await reservation.chargeUpTo(parsed + held);
    };
    try {
      const hooks: DecodeHooks = {
        onFirstEvent: (event, batchRoot) => {
          const batchToken = batchRoot ? batchTokenOf(batchRoot) : null;
          // In a `{"batch": [...], "api_key"}` body the key may still follow the events: wait for it.
          if (batchRoot && !batchToken) return;
          const token = tokenOf(event, batchToken);
          if (!token) throw noToken();
          early = this.lookUpEarly(token);
        },
        onSlice: async (parser) => {
          const settled = (early as EarlyLookup | null)?.settled;
          if (settled && 'project' in settled && !settled.project) throw invalidToken();
          parsed = weightOf(parser.byteCount, parser.values);
          await reservation.chargeUpTo(parsed + held);
        },
        // Received bytes collected and the copies made of them, as they come and go.
        onHeld: hold,
      };
      // Decoded within the call, so that no variable here keeps the decoded body alive while it is stored.
      return await this.captureBatch(
        readCaptureBatch(await decodeCaptureBody(body, this.limits, hooks)),
        early,
        deadline,
        others,
        hold,
      );
    } catch (error) {
      // An abandoned request was answered already: its body is not waited for.
      drainFirst = answeredAfterBody(error) && !signal?.aborted;
      throw error;
    } finally {
      signal?.removeEventListener('abort', abandon);
      reservation.release();
      // Whatever the client still sends after an early answer is read and dropped. A refused request (an unknown
      // token, a malformed body) is answered once the body is in (within the body limit and the request timeout),
      // as a client may read only then; the memory budget's 503 and a body past a limit are answered at once, so
      // that shedding load or refusing a size takes no more of the body. While memory is short (the budget half
      // used or refusing), nothing more of a refused body is read: it is answered at once, the connection closed.
      const drained = letGo();
      if (drainFirst) await drained;
    }
  }

  /**
   * Capture of an already decoded body (the demo data generator calls this directly). Not async itself, so that
   * only the batch read from the body refers to it while it is stored.
   */
  captureJson(
    payload: unknown,
    early: EarlyLookup | null = null,
    deadline: RequestDeadline | null = null,
    others?: OtherEventsSink,
  ): Promise<IngestResult> {
    try {
      return this.captureBatch(readCaptureBatch(payload), early, deadline, others, () => Promise.resolve());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  private async captureBatch(
    batch: CaptureBatch,
    early: EarlyLookup | null,
    deadline: RequestDeadline | null,
    others: OtherEventsSink | undefined,
    hold: (bytes: number) => Promise<void>,
  ): Promise<IngestResult> {
    if (!batch.token) throw noToken();
    let project: ProjectEntity | null;
    if (early && early.token === batch.token) {
      const result = await early.result;
      if ('error' in result) throw result.error;
      project = result.project;
    } else {
      project = await this.findProject(batch.token);
    }
    if (!project) throw invalidToken();
    try {
      return await this.storeBatch(project, batch, deadline, others, hold);
    } catch (error) {
      if (!isForeignKeyViolation(error)) throw error;
      // The project was deleted during the request (or since its token was looked up): its token is now
      // unknown, as a fresh lookup says.
      this.projects.forgetToken(batch.token);
      if (!(await this.findProject(batch.token))) throw invalidToken();
      throw error;
    }
  }

  private async storeBatch(
    project: ProjectEntity,
    batch: CaptureBatch,
    deadline: RequestDeadline | null,
    others: OtherEventsSink | undefined,
    hold: (bytes: number) => Promise<void>,
  ): Promise<IngestResult> {
    const dropped = new DroppedValues();
    if (!others) return this.storeSnapshots(project, batch, deadline, dropped);
    let result: IngestResult = { stored: 0, duplicates: 0, dropped: 0, capped: 0, setsDropped: 0 };
    // The events' transaction may run again (a deadlock): the snapshots are read once (reading empties the
    // batch's events) and stored on every attempt.
    let snapshots: SnapshotBatch[] | undefined;
    await others(project, batch, dropped, hold, async () => {
      snapshots ??= await this.readSnapshots(project, batch, dropped);
      result = await this.ingestion.ingest(project.id, snapshots, deadline);
    });
    return result;
  }

  /** The `$snapshot` events of the batch, stored as recordings. */
  private async storeSnapshots(
    project: ProjectEntity,
    batch: CaptureBatch,
    deadline: RequestDeadline | null,
    dropped: DroppedValues,
  ): Promise<IngestResult> {
    return this.ingestion.ingest(project.id, await this.readSnapshots(project, batch, dropped), deadline);
  }

  /** The `$snapshot` events of the batch as recordings' batches; the batch's events are emptied (collected). */
  private async readSnapshots(
    project: ProjectEntity,
    batch: CaptureBatch,
    dropped: DroppedValues,
  ): Promise<SnapshotBatch[]> {
    const droppedSets = new DroppedValues();
    const snapshots = await readSnapshotEvents(batch, dropped, { ...this.readLimits, droppedSets });
    // From here on only the snapshots are needed: the rest of the decoded body can be collected.
    batch.events.length = 0;
    if (dropped.count) {
      this.logger.warn(
        { teamId: project.id, droppedCount: dropped.count, dropped: dropped.listed },
        `capture dropped ${dropped.count} value(s) that cannot be stored (NUL or lone UTF-16 surrogate) and stored the rest of the batch`,
      );
    }
    if (droppedSets.count) {
      this.logger.warn(
        { teamId: project.id, droppedCount: droppedSets.count, dropped: droppedSets.listed },
        `capture dropped ${droppedSets.count} $set/$set_once past PERSON_SET_MAX_KEYS or PERSON_SET_MAX_BYTES and stored the rest of the batch`,
      );
    }
    return snapshots;
  }

  private findProject(token: string): Promise<ProjectEntity | null> {
    return isLookupableToken(token) ? this.projects.findByApiToken(token) : Promise.resolve(null);
  }

  private lookUpEarly(token: string): EarlyLookup {
    const lookup: EarlyLookup = { token, result: Promise.resolve({ project: null }), settled: null };
    lookup.result = this.findProject(token).then(
      (project) => (lookup.settled = { project }),
      (error: unknown) => (lookup.settled = { error }),
    );
    return lookup;
  }
}
