import { createHash } from 'node:crypto';

/**
 * The object store of snapshot chunks (RECORDING_STORAGE=s3). A chunk stored there is one object holding the
 * same gzip bytes a database chunk holds in `session_recording_snapshots.data`; its row keeps `object_key`.
 */
export abstract class SnapshotObjectStore {
  /** Whether a bucket is configured (RECORDING_S3_BUCKET); every other method throws when it is not. */
  abstract readonly configured: boolean;

  /** A new, unique key for a chunk of this recording, under RECORDING_S3_PREFIX. */
  abstract newKey(teamId: number, sessionId: string): string;

  /** The key of the stored chunk `id` of this recording when it is moved into the store (one key per chunk). */
  abstract chunkKey(teamId: number, sessionId: string, id: string): string;

  /**
   * A new, unique key for a packed object (chunks of many recordings of one retention period) written at `at`:
   * `<prefix>packed/r<retention days>/<UTC day>/<uuid>`, so that a lifecycle rule per retention prefix can expire
   * them and the orphan sweep can list recent days only.
   */
  abstract packedKey(at: Date, retentionDays: number): string;

  /** The bucket's lifecycle rules (empty when it has none). */
  abstract lifecycleRules(): Promise<LifecycleRule[]>;

  /** Replaces the bucket's lifecycle rules. */
  abstract putLifecycleRules(rules: readonly LifecycleRule[]): Promise<void>;

  /** Writes the object; resolves once the store has acknowledged it (durable). */
  abstract put(key: string, data: Buffer): Promise<void>;

  /** The object's bytes, or null when it does not exist. */
  abstract get(key: string): Promise<Buffer | null>;

  /**
   * The SHA-256 (hex) and length of the object's bytes, hashed as they arrive (never held whole: a packed object
   * is up to RECORDING_PACK_MAX_BYTES), or null when it does not exist. What a writer checks its object against.
   */
  abstract digest(key: string): Promise<ObjectDigest | null>;

  /**
   * Writes the object, then reads it back as a stream and compares its digest with `data`'s: resolves once the
   * store holds exactly these bytes, with their SHA-256 (hex); else throws `mismatch` (the store answered other
   * bytes, or none) or the store's error.
   */
  async putVerified(key: string, data: Buffer, mismatch: () => string): Promise<string> {
    const expected = sha256Hex(data);
    await this.put(key, data);
    const written = await this.digest(key);
    if (!written || written.bytes !== data.length || written.sha256 !== expected) {
      const read = written ? `${written.bytes} bytes, SHA-256 ${written.sha256.slice(0, 12)}…` : 'no object';
      throw new Error(
        `${mismatch()} (written: ${data.length} bytes, SHA-256 ${expected.slice(0, 12)}…; read back: ${read})`,
      );
    }
    return expected;
  }

  /**
   * `length` bytes of the object from `offset` (one ranged GET), or null when the object does not exist. Fewer
   * bytes than asked (the object shorter than the range) is an error.
   */
  abstract getRange(key: string, offset: number, length: number): Promise<Buffer | null>;

  /** Deletes the objects (missing ones are not an error), in requests of at most 1,000 keys. */
  abstract deleteMany(keys: readonly string[]): Promise<void>;

  /**
   * One page of the objects under RECORDING_S3_PREFIX, in key order after `after`, with their last
   * modification time: what the orphan sweep walks.
   */
  abstract list(
    after: string | null,
    limit: number,
    /** Only the keys under this prefix (below RECORDING_S3_PREFIX), e.g. `packed/2026-11-21/`. */
    under?: string,
  ): Promise<{ objects: { key: string; lastModified: Date }[]; more: boolean }>;
}

/** What `SnapshotObjectStore#digest` reads of an object. */
export interface ObjectDigest {
  sha256: string;
  bytes: number;
}

export const sha256Hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** A bucket lifecycle rule: objects under `prefix` expire `expirationDays` after their creation. */
export interface LifecycleRule {
  id: string;
  prefix: string;
  expirationDays: number;
  /** Whether the rule is enabled. Rules of others are kept as they are (`raw`). */
  enabled: boolean;
  /** The rule as the store returned it, for rules this service does not manage. */
  raw?: unknown;
}

/** The store is down or refused the request: capture answers 503, reads 503. */
export class ObjectStoreUnavailableError extends Error {
  constructor(
    readonly operation: string,
    cause: unknown,
  ) {
    super(
      `the recording object store failed to ${operation}: ${(cause as Error)?.message ?? String(cause)}`,
      {
        cause,
      },
    );
    this.name = 'ObjectStoreUnavailableError';
  }
}
