import { Inject, Injectable, Logger, type OnApplicationBootstrap, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Feature } from '../common/feature/feature.js';
import { ApiError } from '../common/errors/api-error.js';
import { isForeignKeyViolation, isTransactionConflict } from '../common/errors/database-errors.js';
import { ReadinessChecks } from '../common/health/readiness-checks.js';
import { RequestBodyStream } from '../common/http/raw-body.middleware.js';
import type { RequestDeadline } from '../common/http/request-deadline.js';
import { Yielder } from '../common/time/yielder.js';
import { AppConfig } from '../config/config.js';
import { TransactionHost } from '../database/transactions.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { JsonLimits } from './bounded-json.js';
import { type CaptureBody, decodeCaptureBody, type DecodeHooks } from './capture-body.js';
import {
  batchTokenOf,
  type CaptureBatch,
  type CaptureEvent,
  readCaptureBatch,
  tokenOf,
} from './capture-events.js';
import { CaptureMemoryBudget, weightOf } from './capture-memory-budget.js';
import { DroppedValues, isLookupableToken } from './capture-text.js';
import {
  INGEST_FEATURES,
  type IngestEndpoint,
  type IngestReceipt,
  type IngestSink,
  isIngestSink,
  type SinkWrite,
} from './ingest-sink.js';

/**
 * The logger's context of the pipeline's warnings: the name operators' log queries know them by (it was the
 * capture service's).
 */
export const CAPTURE_LOG_CONTEXT = 'CaptureService';
/** Attempts of a request's transaction lost to a deadlock or serialization failure. */
const MAX_ATTEMPTS = 3;

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

/** How a request came in: its endpoint and when and from where it was received. */
export interface IngestOrigin extends IngestReceipt {
  endpoint: IngestEndpoint;
}

/** What each sink stored, by the sink's name (the sinks that stored nothing are absent). */
export type IngestResults = Map<string, unknown>;

/** A declared sink, found among the providers. */
interface ResolvedSink {
  name: string;
  order: number;
  sink: IngestSink;
}

/** The project lookup started as soon as the token is known, settled without ever rejecting. */
interface EarlyLookup {
  token: string;
  result: Promise<{ project: ProjectEntity | null } | { error: unknown }>;
  settled: { project: ProjectEntity | null } | { error: unknown } | null;
}

/**
 * Whether an error capture raised is answered only once the rest of the body has been read: a 4xx refusing the
 * request itself, not the memory budget's 503, a size past a limit (413) or the per-address cap (429).
 */
export function answeredAfterBody(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  const status = error.getStatus();
  return status >= 400 && status < 500 && status !== 413 && status !== 429;
}

/**
 * The ingestion engine: decodes a capture request's body within the public path's limits and the memory budget,
 * checks the project token as soon as the first event is decoded (the rest of the body is then not read for an
 * unknown one), hands the events to the sinks the features declare in their manifests (`sinks`) — each takes
 * its events and checks them — and runs the sinks' writes in one transaction: a request is stored whole or not
 * at all, and a transaction lost to a deadlock or serialization failure runs again (up to 3 attempts within the
 * deadline).
 */
@Injectable()
export class IngestPipeline implements OnApplicationBootstrap {
  private readonly logger = new Logger(CAPTURE_LOG_CONTEXT);
  private readonly limits: JsonLimits;
  private resolved: Promise<ResolvedSink[]> | null = null;

  constructor(
    config: AppConfig,
    private readonly projects: ProjectsService,
    private readonly budget: CaptureMemoryBudget,
    private readonly transactions: TransactionHost,
    private readonly moduleRef: ModuleRef,
    @Optional()
    @Inject(INGEST_FEATURES)
    private readonly features: readonly Pick<Feature, 'name' | 'sinks'>[] = [],
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

  /** Finds the declared sinks at boot, so that a sink that is no provider stops the boot. */
  async onApplicationBootstrap(): Promise<void> {
    await this.sinks();
  }

  /** The sinks of the features, in their order: each a provider of its feature's modules. */
  private sinks(): Promise<ResolvedSink[]> {
    this.resolved ??= Promise.all(
      this.features.flatMap((feature) =>
        (feature.sinks ?? []).map(async ({ name, order, handler }) => {
          const sink: unknown = this.moduleRef.get(await handler(), { strict: false });
          if (!isIngestSink(sink)) {
            throw new Error(`feature ${feature.name}: its sink ${name} has no takes() and prepare()`);
          }
          return { name, order, sink };
        }),
      ),
    ).then((sinks) => sinks.sort((a, b) => a.order - b.order));
    return this.resolved;
  }

  /** `deadline`: the request's REQUEST_TIMEOUT_MS; once it has passed nothing of the request is committed. */
  async capture(
    body: CaptureBody & { discard?(): Promise<void> | void },
    origin: IngestOrigin,
    deadline: RequestDeadline | null = null,
  ): Promise<IngestResults> {
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
        origin,
        deadline,
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
    origin: IngestOrigin,
    deadline: RequestDeadline | null = null,
  ): Promise<IngestResults> {
    try {
      return this.captureBatch(readCaptureBatch(payload), null, origin, deadline, () => Promise.resolve());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  private async captureBatch(
    batch: CaptureBatch,
    early: EarlyLookup | null,
    origin: IngestOrigin,
    deadline: RequestDeadline | null,
    hold: (bytes: number) => Promise<void>,
  ): Promise<IngestResults> {
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
      return await this.storeBatch(project, batch, origin, deadline, hold);
    } catch (error) {
      if (!isForeignKeyViolation(error)) throw error;
      // The project was deleted during the request (or since its token was looked up): its token is now
      // unknown, as a fresh lookup says.
      this.projects.forgetToken(batch.token);
      if (!(await this.findProject(batch.token))) throw invalidToken();
      throw error;
    }
  }

  /**
   * Hands the batch's events to the sinks that take them, lets each prepare its write (in their order), then runs
   * the writes in one transaction.
   */
  private async storeBatch(
    project: ProjectEntity,
    batch: CaptureBatch,
    origin: IngestOrigin,
    deadline: RequestDeadline | null,
    hold: (bytes: number) => Promise<void>,
  ): Promise<IngestResults> {
    const { endpoint, ...received } = origin;
    const sinks = await this.sinks();
    const lists = await this.eventsBySink(batch.events, sinks, endpoint);
    // From here on the sinks hold the events: the rest of the decoded body can be collected.
    batch.events.length = 0;
    const dropped = new DroppedValues();
    const writes: { name: string; write: SinkWrite }[] = [];
    for (let i = 0; i < sinks.length; i++) {
      const events = lists[i];
      lists[i] = [];
      if (!events.length) continue;
      const { sentAt, historicalMigration, withoutBadText } = batch;
      const request = { project, endpoint, received, deadline, hold, dropped, events };
      const write = await sinks[i].sink.prepare({
        ...request,
        batch: { sentAt, historicalMigration, withoutBadText },
      });
      if (write) writes.push({ name: sinks[i].name, write });
    }
    if (dropped.count) {
      this.logger.warn(
        { teamId: project.id, droppedCount: dropped.count, dropped: dropped.listed },
        `capture dropped ${dropped.count} value(s) that cannot be stored (NUL or lone UTF-16 surrogate) and stored the rest of the batch`,
      );
    }
    await this.commit(
      project,
      writes.map((w) => w.write),
      deadline,
    );
    const results: IngestResults = new Map();
    for (const { name, write } of writes) results.set(name, write.result?.());
    return results;
  }

  /** The events each sink takes, one list per sink (an event no sink takes is ignored). */
  private async eventsBySink(
    events: readonly CaptureEvent[],
    sinks: readonly ResolvedSink[],
    endpoint: IngestEndpoint,
  ): Promise<CaptureEvent[][]> {
    const lists = sinks.map((): CaptureEvent[] => []);
    const yielder = new Yielder();
    for (const entry of events) {
      for (let i = 0; i < sinks.length; i++) if (sinks[i].sink.takes(entry, endpoint)) lists[i].push(entry);
      if (yielder.due) await yielder.tick();
    }
    return lists;
  }

  /**
   * The writes of one request in one transaction, retried (up to MAX_ATTEMPTS, within the deadline) when a
   * deadlock or serialization failure rolled it back, or when a sink repaired what failed. Once the request was
   * answered with the timeout nothing commits: the commit is claimed from the deadline first.
   */
  private async commit(project: ProjectEntity, writes: SinkWrite[], deadline: RequestDeadline | null) {
    if (!writes.length) return;
    for (let attempt = 1; ; attempt++) {
      deadline?.throwIfPassed();
      let beforeCommit = false;
      try {
        await this.transactions.withTransaction(async () => {
          try {
            for (const write of writes) await write.write();
            deadline?.claimCommit();
          } catch (error) {
            beforeCommit = true;
            throw error;
          }
        });
        break;
      } catch (error) {
        deadline?.commitFailed();
        let repaired = false;
        for (const write of writes) if (await write.failed?.(error, beforeCommit)) repaired = true;
        const conflict = isTransactionConflict(error) && attempt < MAX_ATTEMPTS;
        if (!(repaired || conflict) || deadline?.passed) throw error;
        this.logger.warn({ teamId: project.id, attempt }, 'capture transaction retried');
      }
    }
    for (const write of writes) write.committed?.();
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
