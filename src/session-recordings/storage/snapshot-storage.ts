import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error.js';
import { AppConfig } from '../../config/config.js';
import { ObjectStoreUnavailableError, SnapshotObjectStore } from './snapshot-object-store.js';

/** Object uploads of one capture request in flight at once. */
const UPLOAD_CONCURRENCY = 8;

/** A chunk to store: its gzip bytes, and the recording it belongs to. */
export interface ChunkToStore {
  teamId: number;
  sessionId: string;
  data: Buffer;
}

/**
 * Where a stored chunk's bytes are: in its row (`data`) or in the object store (`objectKey`): the whole object
 * (the per-chunk layout), or `objectLength` bytes from `objectOffset` of a packed object.
 */
export interface StoredChunkBytes {
  data: Buffer | null;
  objectKey: string | null;
  objectOffset?: string | null;
  objectLength?: number | null;
  /** Set by `store` when the bytes wait in the buffer of chunks to pack (RECORDING_S3_LAYOUT=packed). */
  buffered?: boolean;
}

/** The unpacked chunks waiting in the database, as the packer last measured them. */
export interface PackBacklog {
  chunks: number;
  bytes: number;
  /** Age of the oldest waiting chunk, 0 when none waits. */
  oldestSeconds: number;
}

/** Retry-After of a capture refused because the unpacked backlog is over RECORDING_UNPACKED_MAX_BYTES. */
const BACKLOG_RETRY_AFTER_SECONDS = 30;

/**
 * Where snapshot chunks live (RECORDING_STORAGE): `postgres` keeps the gzip bytes in the chunk's row; `s3` with
 * RECORDING_S3_LAYOUT=packed keeps them in the row too (capture never waits on the store) and the packer
 * (SnapshotPacker) later moves them into a packed object; `s3` with `per-chunk` uploads them as one object per
 * chunk before the row (which then holds only `object_key`) is inserted, so a committed row never points at an
 * object that was not acknowledged. Reads follow each row, whichever backend and layout wrote it.
 */
@Injectable()
export class SnapshotStorage {
  private readonly logger = new Logger(SnapshotStorage.name);
  readonly backend: 'postgres' | 's3';
  /** Whether chunks are committed to the database and packed later (RECORDING_STORAGE=s3, layout `packed`). */
  readonly packed: boolean;
  private readonly backlogLimit: number;
  private backlog: PackBacklog = { chunks: 0, bytes: 0, oldestSeconds: 0 };

  constructor(
    private readonly objects: SnapshotObjectStore,
    config: AppConfig,
  ) {
    this.backend = config.get('RECORDING_STORAGE');
    this.packed = this.backend === 's3' && config.get('RECORDING_S3_LAYOUT') === 'packed';
    this.backlogLimit = config.get('RECORDING_UNPACKED_MAX_BYTES');
  }

  /** Records the backlog the packer measured; capture checks it against RECORDING_UNPACKED_MAX_BYTES. */
  noteBacklog(backlog: PackBacklog): void {
    this.backlog = backlog;
  }

  /** The unpacked backlog as last measured (by this process's packer tick). */
  get lastBacklog(): PackBacklog {
    return this.backlog;
  }

  /**
   * Makes the chunks durable in the configured backend: for `s3`, uploads them (a few at a time) and records
   * each uploaded key in `uploaded` as soon as it is acknowledged (so a caller that fails afterwards can remove
   * them); for `postgres`, nothing to do. The result is what each chunk's row holds.
   */
  async store(chunks: readonly ChunkToStore[], uploaded: string[]): Promise<StoredChunkBytes[]> {
    if (this.packed && chunks.length && this.backlog.bytes >= this.backlogLimit) {
      this.logger.warn(
        { unpackedBytes: this.backlog.bytes, limit: this.backlogLimit },
        'capture refused: unpacked recording chunks over RECORDING_UNPACKED_MAX_BYTES (the object store is behind)',
      );
      throw new ApiError(
        HttpStatus.SERVICE_UNAVAILABLE,
        'unavailable',
        'Recording storage is behind. Try again shortly.',
        null,
        undefined,
        { 'Retry-After': String(BACKLOG_RETRY_AFTER_SECONDS) },
      );
    }
    if (this.packed) return chunks.map((c) => ({ data: c.data, objectKey: null, buffered: true }));
    if (this.backend === 'postgres') return chunks.map((c) => ({ data: c.data, objectKey: null }));
    const out: StoredChunkBytes[] = new Array(chunks.length);
    let next = 0;
    let failed = false;
    const worker = async () => {
      while (next < chunks.length && !failed) {
        const i = next++;
        const key = this.objects.newKey(chunks[i].teamId, chunks[i].sessionId);
        try {
          await this.objects.put(key, chunks[i].data);
        } catch (error) {
          failed = true;
          throw error;
        }
        uploaded.push(key);
        out[i] = { data: null, objectKey: key };
      }
    };
    // Every upload has settled before this returns or throws, so `uploaded` is complete for the caller.
    const results = await Promise.allSettled(
      Array.from({ length: Math.min(UPLOAD_CONCURRENCY, chunks.length) }, worker),
    );
    const rejected = results.find((r) => r.status === 'rejected');
    if (rejected) throw rejected.reason;
    return out;
  }

  /**
   * Removes objects uploaded for a write that did not commit. Best effort: what cannot be removed now is an
   * orphan, which the orphan sweep deletes once older than RECORDING_ORPHAN_GRACE_MINUTES.
   */
  async discard(keys: readonly string[]): Promise<void> {
    if (!keys.length) return;
    try {
      await this.objects.deleteMany(keys);
    } catch (error) {
      this.logger.warn(
        { err: error, objects: keys.length },
        'uploaded snapshot objects of a failed capture could not be removed; the orphan sweep will',
      );
    }
  }

  /**
   * `length` bytes of a packed object from `offset` (adjacent chunks read in one request), or null when the
   * object is gone. A store that fails is 503.
   */
  async readRange(key: string, offset: number, length: number): Promise<Buffer | null> {
    try {
      const data = await this.objects.getRange(key, offset, length);
      if (!data) this.logger.warn({ objectKey: key }, 'packed snapshot object missing: chunks skipped');
      return data;
    } catch (error) {
      throw unavailable(this.logger, error);
    }
  }

  /**
   * A stored chunk's gzip bytes, or null when its object is gone (its recording purged or deleted meanwhile).
   * A store that fails is 503.
   */
  async read(chunk: StoredChunkBytes): Promise<Buffer | null> {
    if (chunk.data) return chunk.data;
    if (!chunk.objectKey) return null;
    try {
      const data =
        chunk.objectOffset != null && chunk.objectLength != null
          ? await this.objects.getRange(chunk.objectKey, Number(chunk.objectOffset), chunk.objectLength)
          : await this.objects.get(chunk.objectKey);
      if (!data) this.logger.warn({ objectKey: chunk.objectKey }, 'snapshot object missing: chunk skipped');
      return data;
    } catch (error) {
      throw unavailable(this.logger, error);
    }
  }
}

/**
 * The 503 answered when the object store fails (logged with the cause, which never reaches the client); other
 * errors are returned as they are.
 */
export function unavailable(logger: Logger, error: unknown): unknown {
  if (!(error instanceof ObjectStoreUnavailableError)) return error;
  logger.error({ err: error }, 'recording object store unavailable');
  return ApiError.unavailable('The recording store is temporarily unavailable. Try again shortly.');
}
