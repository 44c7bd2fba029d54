import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error.js';
import { AppConfig } from '../../config/config.js';
import { SnapshotStorageRepository, type WrappedKeyRow } from './snapshot-storage.repository.js';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Bytes an encrypted chunk takes besides its gzip bytes: nonce and tag. */
export const ENCRYPTION_OVERHEAD = NONCE_BYTES + TAG_BYTES;

/** A recording's identity, as keys are looked up by it. */
export interface RecordingRef {
  teamId: number;
  sessionId: string;
}

export const recordingRef = (teamId: number, sessionId: string): string => `${teamId}/${sessionId}`;

/**
 * A recording's encrypted bytes cannot be opened: its key was wrapped by another key-encryption key, or the
 * bytes (or the wrapped key) are not those that were written. Answered as a clear 500 of its own, never as
 * garbage bytes.
 */
export class RecordingDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordingDecryptionError';
  }
}

/** What a read answers when a recording's bytes cannot be decrypted (the cause is logged, never sent). */
export function undecryptable(logger: Logger, error: RecordingDecryptionError): ApiError {
  logger.error({ err: error }, 'recording bytes cannot be decrypted');
  return new ApiError(
    HttpStatus.INTERNAL_SERVER_ERROR,
    'recording_undecryptable',
    'This recording cannot be decrypted with the configured key-encryption key; the operator has been told.',
  );
}

/** What a read answers for an encrypted chunk whose recording's key is gone: the recording was deleted. */
export const deletedRecording = (): ApiError => ApiError.notFound('This recording was deleted.');

function seal(key: Buffer | KeyObject, plaintext: Buffer, aad: string): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = cipher.update(plaintext);
  cipher.final();
  return Buffer.concat([nonce, body, cipher.getAuthTag()], NONCE_BYTES + body.length + TAG_BYTES);
}

function open(key: Buffer | KeyObject, sealed: Buffer, aad: string): Buffer | null {
  if (sealed.length < ENCRYPTION_OVERHEAD) return null;
  const decipher = createDecipheriv(ALGORITHM, key, sealed.subarray(0, NONCE_BYTES));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const body = decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES));
  try {
    decipher.final();
  } catch {
    return null;
  }
  return body;
}

/**
 * Crypto-shredding of recordings (docs/decisions.md §14): each recording has a random AES-256-GCM data key,
 * kept in `session_recording_keys` wrapped (AES-256-GCM) by the key-encryption key RECORDING_KEY_ENCRYPTION_KEY;
 * every chunk the packer (or `migrate-storage --to packed`) writes into a packed object is sealed with it as
 * nonce (12 random bytes) ‖ ciphertext ‖ tag (16), its chunk id and recording bound in as associated data (a
 * range cannot be passed off as another chunk's). Deleting the recording deletes the key row, after which its
 * ranges in shared objects cannot be opened by anyone.
 *
 * Without RECORDING_KEY_ENCRYPTION_KEY (`enabled` false) chunks are packed in the clear, as before; encrypted
 * chunks already written then cannot be read (a clear error).
 */
@Injectable()
export class RecordingKeys {
  private readonly logger = new Logger(RecordingKeys.name);
  /** The key-encryption key, made a KeyObject once (a raw key would be made into one by every cipher). */
  private readonly kek: KeyObject | null;
  /** Identifies the key-encryption key in key rows (a digest, never the key). */
  readonly kekId: string;

  constructor(
    private readonly repository: SnapshotStorageRepository,
    config: AppConfig,
  ) {
    const raw = config.get('RECORDING_KEY_ENCRYPTION_KEY');
    const kek = raw ? Buffer.from(raw, 'base64') : null;
    this.kek = kek ? createSecretKey(kek) : null;
    this.kekId = kek ? kekIdOf(kek) : '';
  }

  /** Whether chunks written to packed objects are encrypted (RECORDING_KEY_ENCRYPTION_KEY is set). */
  get enabled(): boolean {
    return this.kek !== null;
  }

  /**
   * The data keys of these recordings, creating those that have none yet, for the live recordings only: a
   * recording deleted (or gone) gets no key and is absent from the map, and its chunks must not be packed.
   * A key row is inserted only while the recording's row is locked FOR SHARE and still live, so a concurrent
   * DELETE either comes first (no key is created) or waits and then deletes the key.
   */
  async keysFor(recordings: readonly RecordingRef[]): Promise<Map<string, Buffer>> {
    const kek = this.requireKek();
    const unique = new Map<string, RecordingRef>();
    for (const r of recordings) unique.set(recordingRef(r.teamId, r.sessionId), r);
    const refs = [...unique.values()];
    const out = new Map<string, Buffer>();
    if (!refs.length) return out;
    // One project at a time: each statement names its project (on Citus, routed to the project's shard).
    const byProject = new Map<number, string[]>();
    for (const r of refs) byProject.set(r.teamId, [...(byProject.get(r.teamId) ?? []), r.sessionId]);
    for (const [teamId, sessionIds] of byProject) {
      const existing = await this.repository.wrappedKeys(teamId, sessionIds);
      const found = new Set(existing.map((e) => e.sessionId));
      const missing = sessionIds.filter((sessionId) => !found.has(sessionId));
      if (missing.length) {
        await this.repository.insertKeys(
          teamId,
          missing.map((sessionId) => ({
            sessionId,
            wrappedKey: seal(kek, randomBytes(KEY_BYTES), recordingRef(teamId, sessionId)),
          })),
          this.kekId,
        );
        existing.push(...(await this.repository.wrappedKeys(teamId, missing)));
      }
      for (const row of existing) out.set(recordingRef(row.teamId, row.sessionId), this.unwrap(row));
    }
    return out;
  }

  /** The recording's data key, or null when it has none (never packed encrypted, or deleted). */
  async keyOf(teamId: number, sessionId: string): Promise<Buffer | null> {
    const [row] = await this.repository.wrappedKeys(teamId, [sessionId]);
    return row ? this.unwrap(row) : null;
  }

  /**
   * A chunk's bytes sealed with its recording's data key, as stored in a packed object. The key may be given as
   * a KeyObject (`createSecretKey`), made once for all of a recording's chunks of a pass: a raw key is made into
   * one by every cipher.
   */
  seal(key: Buffer | KeyObject, chunkId: string, ref: RecordingRef, data: Buffer): Buffer {
    return seal(key, data, chunkAad(chunkId, ref));
  }

  /** A stored chunk's gzip bytes; throws RecordingDecryptionError when they do not open with the key. */
  open(key: Buffer, chunkId: string, ref: RecordingRef, sealed: Buffer): Buffer {
    const data = open(key, sealed, chunkAad(chunkId, ref));
    if (!data) {
      throw new RecordingDecryptionError(
        `chunk ${chunkId} of recording ${recordingRef(ref.teamId, ref.sessionId)} does not decrypt with its key (altered bytes)`,
      );
    }
    return data;
  }

  private unwrap(row: WrappedKeyRow): Buffer {
    const kek = this.requireKek();
    if (row.kekId !== this.kekId) {
      throw new RecordingDecryptionError(
        `the key of recording ${recordingRef(row.teamId, row.sessionId)} was wrapped by another key-encryption key (${row.kekId}, configured ${this.kekId})`,
      );
    }
    const key = open(kek, row.wrappedKey, recordingRef(row.teamId, row.sessionId));
    if (!key || key.length !== KEY_BYTES) {
      throw new RecordingDecryptionError(
        `the key of recording ${recordingRef(row.teamId, row.sessionId)} does not open with the key-encryption key`,
      );
    }
    return key;
  }

  private requireKek(): KeyObject {
    if (!this.kek) {
      this.logger.error('encrypted recording bytes met but RECORDING_KEY_ENCRYPTION_KEY is not set');
      throw new RecordingDecryptionError(
        'RECORDING_KEY_ENCRYPTION_KEY is not set: encrypted recordings cannot be read',
      );
    }
    return this.kek;
  }
}

const chunkAad = (chunkId: string, ref: RecordingRef): string =>
  `${recordingRef(ref.teamId, ref.sessionId)}/${chunkId}`;

/** The identifier of a key-encryption key stored beside the keys it wraps. */
export const kekIdOf = (kek: Buffer): string =>
  createHash('sha256').update('recording-kek:').update(kek).digest('hex').slice(0, 16);
