import { Injectable, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/errors/database-errors.js';
import { Clock } from '../../common/time/clock.js';
import { IntervalTask } from '../../common/tasks/interval-task.js';
import { AppConfig } from '../../config/config.js';
import { TransactionHost } from '../../database/transactions.js';
import { RecordingKeys, recordingRef } from './recording-keys.js';
import { type LifecycleRule, sha256Hex, SnapshotObjectStore } from './snapshot-object-store.js';
import {
  type ChunkToMove,
  type PackedEntry,
  SnapshotStorageRepository,
  type StorageCounts,
} from './snapshot-storage.repository.js';

/** Chunks listed per query while migrating (their bytes are read one chunk at a time). */
const MIGRATE_PAGE = 200;
/** Objects listed per request by the orphan sweep. */
const SWEEP_PAGE = 1000;
/** The advisory lock of the orphan sweep: one replica sweeps at a time. */
export const SWEEP_LOCK = 7_305_120_001;
const DAY_MS = 86_400_000;
/** The ID prefix of the lifecycle rules this service manages. */
export const LIFECYCLE_RULE_ID = 'recordings-packed-r';

/** Where `migrate-storage` moves chunks: their rows, one object each, or packed objects. */
export type MigrationTarget = 's3' | 'postgres' | 'packed';

export interface MigrationReport {
  to: MigrationTarget;
  /** Chunks moved and verified (checksum of what was written, read back, equal to the source's). */
  moved: number;
  /** Bytes (gzip) moved. */
  bytes: number;
  /** Chunks left where they were: their source was gone (object missing, row deleted or changed meanwhile). */
  skipped: number;
  /** Whether the run stopped before the end (--max-chunks reached or interrupted); running again resumes. */
  stopped: boolean;
  /** How many chunks each backend holds afterwards. */
  counts: StorageCounts;
  /** With `--to packed`: chunks left neither packed nor waiting to be. */
  notPacked?: number;
}

export interface SweepReport {
  /** Objects under RECORDING_S3_PREFIX looked at. */
  scanned: number;
  /** Objects deleted: older than the grace period, and no chunk points at them. */
  deleted: number;
}

/**
 * Moving chunks between the database and the object store (`recordings migrate-storage`), and the orphan sweep:
 * objects that no chunk points at, left by a capture whose transaction failed after its upload or by recordings
 * deleted with their organization or project, are deleted once older than RECORDING_ORPHAN_GRACE_MINUTES (every
 * RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS, by one replica at a time).
 */
@Injectable()
export class SnapshotStorageMaintenance extends IntervalTask {
  static readonly INTERVAL_NAME = 'recording-orphan-sweep';
  private readonly logger = new Logger(SnapshotStorageMaintenance.name);
  /** Whether new chunks are packed (RECORDING_STORAGE=s3, RECORDING_S3_LAYOUT=packed): the sweep lists recent days only. */
  private readonly packed: boolean;
  private inFlight: Promise<SweepReport | null> | null = null;

  constructor(
    private readonly chunks: SnapshotStorageRepository,
    private readonly objects: SnapshotObjectStore,
    private readonly keys: RecordingKeys,
    private readonly transactions: TransactionHost,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    super();
    this.packed = config.get('RECORDING_STORAGE') === 's3' && config.get('RECORDING_S3_LAYOUT') === 'packed';
  }

  /** On a timer only with an object store (its interval is RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS). */
  override enabled(): boolean {
    return this.objects.configured;
  }

  /** Also waits for a pass started by hand (the CLI's). */
  override async onModuleDestroy(): Promise<void> {
    await super.onModuleDestroy();
    await this.inFlight?.catch(() => undefined);
  }

  /** One sweep on the timer (a tick). */
  protected async run(): Promise<void> {
    try {
      const report = await this.sweepOrphans();
      if (report?.deleted) this.logger.log(report, 'orphaned snapshot objects deleted');
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        this.logger.warn({ reason: (err as Error).message }, 'database unavailable: orphan sweep skipped');
        return;
      }
      this.logger.error({ err }, 'orphan sweep failed; the next one retries');
    }
  }

  /**
   * One pass over the objects under the prefix (with the packed layout only the recent days' packed objects,
   * unless `all`): deletes those older than the grace period that no chunk points at. Null when another replica
   * is sweeping. Memory holds one page of keys.
   */
  sweepOrphans(options: { all?: boolean } = {}): Promise<SweepReport | null> {
    this.inFlight ??= this.transactions
      .tryAdvisoryLock(SWEEP_LOCK, async () => {
        const now = this.clock.now().getTime();
        const cutoff = now - this.config.get('RECORDING_ORPHAN_GRACE_MINUTES') * 60_000;
        const report: SweepReport = { scanned: 0, deleted: 0 };
        for (const under of options.all ? [''] : await this.recentPrefixes(now, cutoff)) {
          await this.sweepUnder(under, cutoff, report);
          if (this.stopped) break;
        }
        return report;
      })
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }

  /**
   * What a sweep lists: with the packed layout, under the prefix of each retention period in use
   * (`packed/r<days>/`), only the days that can hold a recent orphan (a packer pass that died after its
   * upload, within the last day past the grace period); with the per-chunk layout the whole prefix.
   */
  private async recentPrefixes(now: number, cutoff: number): Promise<string[]> {
    if (!this.packed) return [''];
    const prefixes: string[] = [];
    const first = Math.floor((cutoff - DAY_MS) / DAY_MS) * DAY_MS;
    for (const days of await this.chunks.retentionPeriods(this.config.get('RECORDING_RETENTION_DAYS'))) {
      for (let day = first; day <= now; day += DAY_MS) {
        prefixes.push(`packed/r${days}/${new Date(day).toISOString().slice(0, 10)}/`);
      }
    }
    return prefixes;
  }

  /**
   * The lifecycle rules of the packed layout: one per retention period in use (the default and every project's),
   * expiring the objects under `packed/r<days>/` a day after the period (an object is written no earlier than
   * the start of any recording in it, so it outlives them all). With `apply`, writes them into the bucket's
   * configuration, keeping the rules not managed here (an ID not starting with `recordings-packed-`) and
   * replacing those that are. Returns the rules of this service and those kept.
   */
  async lifecycleRules(apply = false): Promise<{ rules: LifecycleRule[]; kept: LifecycleRule[] }> {
    if (!this.objects.configured) throw new Error('RECORDING_S3_BUCKET is not set: there is no bucket');
    const prefix = this.config.get('RECORDING_S3_PREFIX');
    const rules = (await this.chunks.retentionPeriods(this.config.get('RECORDING_RETENTION_DAYS'))).map(
      (days): LifecycleRule => ({
        id: `${LIFECYCLE_RULE_ID}${days}`,
        prefix: `${prefix}packed/r${days}/`,
        expirationDays: days + 1,
        enabled: true,
      }),
    );
    if (!apply) return { rules, kept: [] };
    const kept = (await this.objects.lifecycleRules()).filter((r) => !r.id.startsWith(LIFECYCLE_RULE_ID));
    await this.objects.putLifecycleRules([...kept, ...rules]);
    return { rules, kept };
  }

  private async sweepUnder(under: string, cutoff: number, report: SweepReport): Promise<void> {
    let after: string | null = null;
    for (;;) {
      const page = await this.objects.list(after, SWEEP_PAGE, under);
      report.scanned += page.objects.length;
      const old = page.objects.filter((o) => o.lastModified.getTime() < cutoff).map((o) => o.key);
      if (old.length) {
        const referenced = await this.chunks.referencedKeys(old);
        const orphans = old.filter((k) => !referenced.has(k));
        await this.objects.deleteMany(orphans);
        report.deleted += orphans.length;
      }
      if (!page.more || !page.objects.length || this.stopped) break;
      after = page.objects[page.objects.length - 1].key;
    }
  }

  /**
   * Moves every chunk to `to`, one at a time, each verified before its source is dropped: into the store, the
   * object is read back and its SHA-256 compared with the row's bytes (and the row only changes if it still
   * holds those bytes); into the database, the SHA-256 of what the row holds after the update is compared with
   * the object's, in the update's transaction, and the object is deleted after it commits. Progress is the
   * rows themselves, so an interrupted run resumes where it stopped when started again.
   */
  async migrate(
    to: MigrationTarget,
    options: { maxChunks?: number; shouldStop?: () => boolean; progress?: (r: MigrationReport) => void } = {},
  ): Promise<MigrationReport> {
    if (!this.objects.configured) {
      throw new Error('RECORDING_S3_BUCKET is not set: there is no object store to migrate to or from');
    }
    const report: MigrationReport = {
      to,
      moved: 0,
      bytes: 0,
      skipped: 0,
      stopped: false,
      counts: { inDatabase: 0, inObjectStore: 0 },
    };
    const limit = options.maxChunks ?? Infinity;
    if (to === 'packed') {
      await this.toPacked(report, limit, options);
      report.counts = await this.chunks.counts();
      report.notPacked = await this.chunks.countNotPacked();
      return report;
    }
    if (to === 'postgres') {
      // Chunks waiting to be packed: their bytes go from the buffer into their rows.
      for (let n = 1; n > 0 && report.moved < limit && !options.shouldStop?.();) {
        n = await this.chunks.unbuffer(Math.min(MIGRATE_PAGE, limit - report.moved));
        report.moved += n;
      }
    }
    let after = '0';
    outer: for (;;) {
      const page = await this.chunks.chunksToMove(to === 's3', after, MIGRATE_PAGE);
      if (!page.length) break;
      for (const chunk of page) {
        if (report.moved + report.skipped >= limit || options.shouldStop?.()) {
          report.stopped = true;
          break outer;
        }
        after = chunk.id;
        const bytes = to === 's3' ? await this.toObject(chunk) : await this.toDatabase(chunk);
        if (bytes === null) report.skipped++;
        else {
          report.moved++;
          report.bytes += bytes;
        }
        if ((report.moved + report.skipped) % 100 === 0) options.progress?.(report);
      }
    }
    report.counts = await this.chunks.counts();
    return report;
  }

  /**
   * `--to packed`: chunks in their rows or in objects of their own, a page at a time, into packed objects of at
   * most RECORDING_PACK_MAX_BYTES; each object is read back and compared by SHA-256 before the chunks point at
   * it, a row's bytes are dropped only if they are still those that were packed, and a chunk's own object is
   * deleted once its row points at the packed one.
   */
  private async toPacked(
    report: MigrationReport,
    limit: number,
    options: { shouldStop?: () => boolean; progress?: (r: MigrationReport) => void },
  ): Promise<void> {
    const maxBytes = this.config.get('RECORDING_PACK_MAX_BYTES');
    let after = '0';
    for (;;) {
      if (report.moved + report.skipped >= limit || options.shouldStop?.()) {
        report.stopped = true;
        return;
      }
      const page = await this.chunks.chunksToPack(
        this.config.get('RECORDING_RETENTION_DAYS'),
        after,
        Math.min(MIGRATE_PAGE, limit - report.moved - report.skipped),
      );
      if (!page.length) return;
      const parts: Buffer[] = [];
      const entries: (PackedEntry & { from: string | null })[] = [];
      let offset = 0;
      const retentionDays = page[0].retentionDays as number;
      // With encryption, each chunk is sealed with its recording's data key; a deleted recording has none and
      // gets none: its chunks stay where they are (for the purge), counted as skipped.
      const keys = this.keys.enabled ? await this.keys.keysFor(page) : null;
      for (const chunk of page) {
        // One object holds one retention period (its prefix); the next chunk of another starts the next one.
        if (chunk.retentionDays !== retentionDays) break;
        after = chunk.id;
        const key = keys?.get(recordingRef(chunk.teamId, chunk.sessionId));
        const data =
          keys && !key
            ? null
            : chunk.objectKey
              ? await this.objects.get(chunk.objectKey)
              : await this.chunks.chunkData(chunk.id);
        if (!data) {
          report.skipped++;
          continue;
        }
        // The entry's SHA-256 is that of the source's bytes (the index update checks a row's against it); the
        // object's read-back is compared over what is stored.
        const stored = key ? this.keys.seal(key, chunk.id, chunk, data) : data;
        parts.push(stored);
        entries.push({
          id: chunk.id,
          offset,
          length: stored.length,
          sha256: sha256Hex(data),
          from: chunk.objectKey,
        });
        offset += stored.length;
        if (offset >= maxBytes) break;
      }
      if (!entries.length) continue;
      const body = Buffer.concat(parts, offset);
      const key = this.objects.packedKey(this.clock.now(), retentionDays);
      await this.objects.putVerified(
        key,
        body,
        () => `the packed object ${key} read back differs from the chunks written into it`,
      );
      const moved = await this.chunks.movedToPacked(key, entries, keys !== null);
      if (!moved.size) await this.objects.deleteMany([key]);
      const replaced = entries.filter((e) => e.from !== null && moved.has(e.id)).map((e) => e.from as string);
      await this.objects.deleteMany(replaced);
      for (const e of entries) {
        if (moved.has(e.id)) {
          report.moved++;
          report.bytes += e.length;
        } else report.skipped++;
      }
      options.progress?.(report);
    }
  }

  /** Moves one chunk into the store; its byte count, or null when the row no longer held its bytes. */
  private async toObject(chunk: { id: string; teamId: number; sessionId: string }): Promise<number | null> {
    const data = await this.chunks.chunkData(chunk.id);
    if (!data) return null;
    const key = this.objects.chunkKey(chunk.teamId, chunk.sessionId, chunk.id);
    const digest = await this.objects.putVerified(
      key,
      data,
      () => `chunk ${chunk.id}: the object ${key} read back differs from the chunk's bytes`,
    );
    if (await this.chunks.movedToObject(chunk.id, key, digest)) return data.length;
    // The row changed or went away meanwhile: the object is nobody's.
    await this.objects.deleteMany([key]);
    return null;
  }

  /** Moves one chunk into the database; its byte count, or null when its object (or row) was gone. */
  private async toDatabase(chunk: ChunkToMove): Promise<number | null> {
    if (!chunk.objectKey) return null;
    const key = chunk.objectKey;
    const packed = chunk.objectOffset !== null && chunk.objectLength !== null;
    const dataKey = chunk.encrypted ? await this.keys.keyOf(chunk.teamId, chunk.sessionId) : null;
    if (chunk.encrypted && !dataKey) {
      // Its recording was deleted: the bytes cannot be read by anyone; the purge removes the row.
      this.logger.warn({ chunk: chunk.id }, 'chunk of a deleted recording (no data key): not moved');
      return null;
    }
    const stored = packed
      ? await this.objects.getRange(key, Number(chunk.objectOffset), chunk.objectLength as number)
      : await this.objects.get(key);
    if (!stored) {
      this.logger.warn({ chunk: chunk.id, objectKey: key }, 'snapshot object missing: chunk not moved');
      return null;
    }
    // GCM authenticates what is stored: bytes that do not open stop the migration with the cause.
    const data = dataKey ? this.keys.open(dataKey, chunk.id, chunk, stored) : stored;
    const digest = sha256Hex(data);
    const moved = await this.transactions.withTransaction(async () => {
      const stored = await this.chunks.movedToDatabase(chunk.id, key, data);
      if (stored === null) return false;
      if (stored !== digest) {
        throw new Error(`chunk ${chunk.id}: the bytes written to the database differ from the object ${key}`);
      }
      return true;
    });
    if (!moved) return null;
    // A packed object is deleted once the last of its chunks has left it.
    if (!packed || !(await this.chunks.referencedKeys([key])).has(key)) await this.objects.deleteMany([key]);
    return data.length;
  }
}
