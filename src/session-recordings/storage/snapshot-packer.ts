import { createSecretKey, type KeyObject } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, Optional } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/errors/database-errors.js';
import { Clock } from '../../common/time/clock.js';
import { IntervalTask } from '../../common/tasks/interval-task.js';
import { AppConfig } from '../../config/config.js';
import { TransactionHost } from '../../database/transactions.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { ENCRYPTION_OVERHEAD, RecordingKeys, recordingRef } from './recording-keys.js';
import { SnapshotObjectStore } from './snapshot-object-store.js';
import { type PackBacklog, SnapshotStorage } from './snapshot-storage.js';
import { type BufferedEntry, SnapshotStorageRepository } from './snapshot-storage.repository.js';

/** The advisory lock of the packer: one replica packs at a time. */
export const PACK_LOCK = 7_305_120_002;
/** Most chunks in one packed object (bounds a pass's rows besides RECORDING_PACK_MAX_BYTES). */
const PASS_MAX_CHUNKS = 5000;
/** Bytes of buffered chunks a pass reads at a time (a chunk larger than this is read alone). */
const PASS_READ_BYTES = 4 * 1024 * 1024;
/** Most passes in one tick while a full object's worth keeps waiting. */
const TICK_MAX_PASSES = 10;
const HOUR_MS = 3_600_000;
/** Hours of buffer partitions created ahead of the current one. */
const PARTITIONS_AHEAD = 2;
/**
 * How long after its hour ends a buffer partition is kept at least: a capture transaction that took its time
 * (`created_at` is the request's) may still insert into it.
 */
const PARTITION_GRACE_MS = 15 * 60_000;
/** Least time between two maintenances of the buffer partitions by one process. */
const MAINTAIN_EVERY_MS = 60_000;

/** What one packer pass did. */
export interface PackReport {
  /** The packed object written, or null when nothing was left to pack once the pass ran. */
  objectKey: string | null;
  /** Chunks now read from the object. */
  chunks: number;
  /** Bytes of the object. */
  bytes: number;
  /**
   * Chunks taken but not packed: no longer in the database when the index was written, or of a recording
   * deleted while they waited (dropped, never packed).
   */
  skipped: number;
}

/**
 * The packer (RECORDING_STORAGE=s3, RECORDING_S3_LAYOUT=packed): capture commits chunks to the database; each
 * pass takes the oldest of them, up to RECORDING_PACK_MAX_BYTES, orders them by recording and time (so a
 * recording's chunks are adjacent), writes them as one object under `<prefix>packed/<day>/`, reads the object
 * back and compares its SHA-256, and only then, in one statement, points each chunk at its
 * `(object_key, object_offset, object_length)` (each row only if it still waits and its buffered bytes are still
 * there, with the length that was written). A pass starts once RECORDING_PACK_MAX_BYTES wait or the oldest waiting
 * chunk is RECORDING_PACK_MAX_AGE_SECONDS old.
 *
 * Every replica ticks (RECORDING_PACK_INTERVAL_SECONDS): each measures the backlog (for the gauges and for
 * capture's RECORDING_UNPACKED_MAX_BYTES check); one at a time packs, under an advisory lock. A process killed
 * mid-pass leaves its chunks in the database (packed again by the next pass) and at most one object no chunk
 * points at, which the orphan sweep deletes after RECORDING_ORPHAN_GRACE_MINUTES: nothing lost, nothing read
 * twice.
 */
@Injectable()
export class SnapshotPacker extends IntervalTask implements OnApplicationBootstrap {
  static readonly INTERVAL_NAME = 'recording-packer';
  private readonly logger = new Logger(SnapshotPacker.name);
  private inFlight: Promise<PackReport[] | null> | null = null;
  private failing = false;
  private maintainedAt = 0;

  constructor(
    private readonly chunks: SnapshotStorageRepository,
    private readonly objects: SnapshotObjectStore,
    private readonly storage: SnapshotStorage,
    private readonly keys: RecordingKeys,
    private readonly transactions: TransactionHost,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    @Optional() private readonly metrics?: MetricsService,
  ) {
    super();
  }

  /** On a timer only with the packed layout on an object store (its interval is RECORDING_PACK_INTERVAL_SECONDS). */
  override enabled(): boolean {
    return this.storage.packed && this.objects.configured;
  }

  /** Creates the buffer partitions of this hour and the next ones before capture needs them. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.storage.packed) return;
    try {
      await this.ensurePartitions();
    } catch (err) {
      this.logger.warn({ err }, 'chunk buffer partitions not created; the packer retries');
    }
  }

  override async onModuleDestroy(): Promise<void> {
    await super.onModuleDestroy();
    await this.inFlight?.catch(() => undefined);
  }

  protected async run(): Promise<void> {
    try {
      await this.packDue();
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        this.logger.warn({ reason: (err as Error).message }, 'database unavailable: packer tick skipped');
        return;
      }
      const backlog = this.storage.lastBacklog;
      this.logger.error(
        {
          err,
          unpackedChunks: backlog.chunks,
          unpackedBytes: backlog.bytes,
          oldestUnpackedSeconds: Math.round(backlog.oldestSeconds),
        },
        'recording packer failed; the chunks wait in the database and the next tick retries',
      );
    }
  }

  /** Measures the unpacked backlog: for capture's limit, the gauges, and whether a pass is due. */
  async measure(): Promise<PackBacklog> {
    const backlog = await this.chunks.backlog(this.clock.now());
    this.storage.noteBacklog(backlog);
    this.metrics?.recordPackBacklog(backlog);
    return backlog;
  }

  private due(backlog: PackBacklog): boolean {
    if (!backlog.chunks) return false;
    return (
      backlog.bytes >= this.config.get('RECORDING_PACK_MAX_BYTES') ||
      backlog.oldestSeconds >= this.config.get('RECORDING_PACK_MAX_AGE_SECONDS')
    );
  }

  /**
   * One tick: measures, and when a pass is due and no other replica packs, runs passes while one is due (at
   * most TICK_MAX_PASSES). Null when another replica holds the lock or nothing was due.
   */
  packDue(options: { force?: boolean } = {}): Promise<PackReport[] | null> {
    this.inFlight ??= (async () => {
      const due = this.due(await this.measure());
      const maintain = this.clock.now().getTime() - this.maintainedAt >= MAINTAIN_EVERY_MS;
      if (!options.force && !due && !maintain) return null;
      return this.transactions.tryAdvisoryLock(PACK_LOCK, async () => {
        if (maintain || options.force) await this.maintainPartitions();
        const reports: PackReport[] = [];
        if (!due && !options.force) return reports;
        for (let i = 0; i < TICK_MAX_PASSES && !this.stopped; i++) {
          const report = await this.pass();
          if (!report.objectKey) break;
          reports.push(report);
          if (!this.due(await this.measure())) break;
        }
        if (this.failing) this.logger.log({ passes: reports.length }, 'recording packer recovered');
        this.failing = false;
        return reports;
      });
    })()
      .catch(async (err: unknown) => {
        this.failing = true;
        await this.measure().catch(() => undefined);
        throw err;
      })
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }

  /** Creates the buffer partitions of the current hour and the next PARTITIONS_AHEAD; how many it could. */
  async ensurePartitions(): Promise<number> {
    const hour = Math.floor(this.clock.now().getTime() / HOUR_MS) * HOUR_MS;
    let created = 0;
    for (let i = 0; i <= PARTITIONS_AHEAD; i++) {
      try {
        await this.chunks.createBufferPartition(new Date(hour + i * HOUR_MS));
        created++;
      } catch (err) {
        // e.g. the default partition already holds rows of that hour: they stay there and are cleaned by rows.
        this.logger.warn({ err, hour: new Date(hour + i * HOUR_MS) }, 'chunk buffer partition not created');
      }
    }
    return created;
  }

  /**
   * Keeps the chunk buffer: creates the coming hours' partitions, drops each past one (past its grace) whose
   * chunks are all packed or deleted, and deletes the default partition's rows no waiting chunk needs.
   */
  async maintainPartitions(): Promise<{ dropped: string[] }> {
    const now = this.clock.now().getTime();
    this.maintainedAt = now;
    await this.ensurePartitions();
    const dropped: string[] = [];
    for (const p of await this.chunks.bufferPartitions()) {
      if (p.hour.getTime() + HOUR_MS + PARTITION_GRACE_MS > now) continue;
      if (await this.chunks.partitionHasWaiting(p.name)) continue;
      try {
        await this.transactions.withTransaction(() => this.chunks.dropBufferPartition(p.name));
        dropped.push(p.name);
      } catch (err) {
        this.logger.warn(
          { err, partition: p.name },
          'chunk buffer partition not dropped; the next maintenance retries',
        );
      }
    }
    await this.chunks.cleanDefaultPartition();
    if (dropped.length) this.logger.log({ partitions: dropped }, 'packed chunk buffer partitions dropped');
    return { dropped };
  }

  /** One pass: one packed object of the oldest unpacked chunks. Run under PACK_LOCK only. */
  private async pass(): Promise<PackReport> {
    const oldest = await this.chunks.unpackedChunks(
      this.config.get('RECORDING_PACK_MAX_BYTES'),
      PASS_MAX_CHUNKS,
      this.config.get('RECORDING_RETENTION_DAYS'),
    );
    if (!oldest.length) return { objectKey: null, chunks: 0, bytes: 0, skipped: 0 };
    // One object holds one retention period (its prefix): that of the oldest waiting chunk; the others wait for
    // the next pass.
    const retentionDays = oldest[0].retentionDays;
    let taken = oldest.filter((c) => c.retentionDays === retentionDays);
    let dropped = 0;
    let keys: Map<string, Buffer> | null = null;
    if (this.keys.enabled) {
      keys = await this.keys.keysFor(taken);
      // A recording deleted while its chunks waited has no key and gets none: its chunks are never packed.
      const orphaned = taken.filter((c) => !keys?.has(recordingRef(c.teamId, c.sessionId)));
      if (orphaned.length) {
        dropped = await this.chunks.dropWaiting(orphaned.map((c) => c.id));
        taken = taken.filter((c) => keys?.has(recordingRef(c.teamId, c.sessionId)));
        if (!taken.length) return { objectKey: null, chunks: 0, bytes: 0, skipped: dropped };
      }
    }
    taken.sort(
      (a, b) =>
        a.teamId - b.teamId ||
        (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0) ||
        a.firstTimestamp.getTime() - b.firstTimestamp.getTime() ||
        (BigInt(a.id) < BigInt(b.id) ? -1 : 1),
    );
    const entries: BufferedEntry[] = [];
    // The object in one allocation, its chunks' bytes read a few megabytes at a time and copied in at their
    // offsets (sealed when keys are on, a fixed overhead each): a pass holds about one object's bytes (32 MB by
    // default) and one piece of its chunks, not the rows of all of them, sealed copies and their concatenation.
    const overhead = keys ? ENCRYPTION_OVERHEAD : 0;
    const body = Buffer.allocUnsafe(taken.reduce((n, c) => n + c.dataLength + overhead, 0));
    // Each recording's data key as a KeyObject, made once for all its chunks of the pass (taken is in recording
    // order).
    let keyRef = '';
    let keyObject: KeyObject | null = null;
    let offset = 0;
    for (const piece of byBytes(taken, PASS_READ_BYTES)) {
      const bytes = await this.chunks.bufferedBytes(piece);
      for (const c of piece) {
        // A buffer row is never updated and goes only with its partition, which no pass drops while its chunks
        // wait: bytes missing or of another length are a fault, and the pass stops (nothing is marked packed).
        const data = bytes.get(c.id);
        if (!data || data.length !== c.dataLength) {
          throw new Error(`chunk ${c.id}: its buffered bytes changed while it was being packed`);
        }
        // The range holds what is stored: the waiting bytes, or them sealed with the recording's data key; the
        // index update checks that the waiting bytes are still there, with their length.
        if (keys) {
          const ref = recordingRef(c.teamId, c.sessionId);
          if (ref !== keyRef) {
            keyRef = ref;
            const raw = keys.get(ref);
            keyObject = raw ? createSecretKey(raw) : null;
          }
        }
        const stored = keyObject ? this.keys.seal(keyObject, c.id, c, data) : data;
        if (stored.length !== data.length + overhead) {
          throw new Error(
            `chunk ${c.id}: ${stored.length} bytes to pack where ${data.length + overhead} were expected`,
          );
        }
        stored.copy(body, offset);
        entries.push({
          id: c.id,
          createdAt: c.createdAt,
          offset,
          length: stored.length,
          dataLength: data.length,
        });
        offset += stored.length;
      }
    }
    const key = this.objects.packedKey(this.clock.now(), retentionDays);
    try {
      await this.objects.putVerified(
        key,
        body,
        () => `the packed object ${key} read back differs from what was written`,
      );
    } catch (err) {
      this.metrics?.recordPackPass('failed');
      throw err;
    }
    const packed = await this.chunks.markPacked(key, entries, keys !== null);
    if (!packed) {
      // Every chunk was deleted meanwhile: the object is nobody's.
      await this.objects.deleteMany([key]).catch(() => undefined);
    }
    this.metrics?.recordPackPass('packed', packed ? body.length : 0);
    return {
      objectKey: packed ? key : null,
      chunks: packed,
      bytes: body.length,
      skipped: taken.length - packed + dropped,
    };
  }
}

/** `chunks` in order, in pieces of at most `max` bytes of data each (a larger chunk is a piece of its own). */
export function* byBytes<C extends { dataLength: number }>(
  chunks: readonly C[],
  max: number,
): Generator<C[]> {
  let piece: C[] = [];
  let bytes = 0;
  for (const c of chunks) {
    if (piece.length && bytes + c.dataLength > max) {
      yield piece;
      piece = [];
      bytes = 0;
    }
    piece.push(c);
    bytes += c.dataLength;
  }
  if (piece.length) yield piece;
}
