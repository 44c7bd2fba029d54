import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error.js';
import { BLOB_V2, type SnapshotsQuery } from './dto/snapshots.dto.js';
import { type SnapshotPosition, SessionRecordingsRepository } from '../session-recordings.repository.js';
import {
  RecordingDecryptionError,
  RecordingKeys,
  deletedRecording,
  undecryptable,
} from '../storage/recording-keys.js';
import { readChunkLines } from '../storage/snapshot-chunks.js';
import { SnapshotStorage } from '../storage/snapshot-storage.js';
import { type ChunkLocation, SnapshotStorageRepository } from '../storage/snapshot-storage.repository.js';

/** A response body written piece by piece (see `writeStream`). */
export interface StreamedBody {
  contentType: string;
  body: AsyncIterable<Buffer | string>;
}

/** Sources listed per query while streaming the list. */
const SOURCES_PAGE = 500;
const BLOB_KEY_WIDTH = 19;
const MAX_BIGINT = 9223372036854775807n;
/** Chunk locations listed per query while reading a range of chunks. */
const LOCATIONS_PAGE = 100;
/** Most bytes one ranged GET of adjacent packed chunks asks for (held in memory while they are written). */
const RANGE_MAX_BYTES = 8 * 1024 * 1024;

/** The blob key of a chunk id: fixed width, so that string order is id order. */
export const blobKeyOf = (id: string): string => id.padStart(BLOB_KEY_WIDTH, '0');

/** The chunk id of a blob key, or null when it cannot be one. */
export function chunkIdOf(key: unknown): string | null {
  if (typeof key !== 'string' || !/^\d{1,19}$/.test(key)) return null;
  const id = BigInt(key);
  return id > 0n && id <= MAX_BIGINT ? id.toString() : null;
}

const optionalString = (query: SnapshotsQuery, name: keyof SnapshotsQuery): string | undefined => {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw ApiError.validation(`${name} must be given once, as a string.`, name);
  return value;
};

/**
 * Reads a recording's snapshots in PostHog's shape, never holding more than one stored chunk: the list of its
 * sources (one per chunk, streamed from keyset pages), or the JSON lines of one chunk or of a range of them,
 * decompressed into the response as they are read, from the chunk's row or its object in the store. Access to the recording is checked by the caller.
 */
@Injectable()
export class SnapshotReader {
  private readonly logger = new Logger(SnapshotReader.name);

  constructor(
    private readonly recordings: SessionRecordingsRepository,
    private readonly storage: SnapshotStorage,
    private readonly locations: SnapshotStorageRepository,
    private readonly keys: RecordingKeys,
  ) {}

  /**
   * What `GET …/snapshots` answers for this query: 400 for a bad query, 404 for an unknown blob key — both
   * before anything is written.
   */
  async read(teamId: number, sessionId: string, query: SnapshotsQuery): Promise<StreamedBody> {
    const source = optionalString(query, 'source');
    const blobKey = optionalString(query, 'blob_key');
    const startKey = optionalString(query, 'start_blob_key');
    const endKey = optionalString(query, 'end_blob_key');
    if (source === undefined) {
      if (blobKey !== undefined || startKey !== undefined || endKey !== undefined) {
        throw ApiError.validation(`Name the source of the blob: source=${BLOB_V2}.`, 'source', 'required');
      }
      return { contentType: 'application/json; charset=utf-8', body: this.sources(teamId, sessionId) };
    }
    if (source !== BLOB_V2) {
      throw ApiError.validation(`Unknown source '${source}': this service stores ${BLOB_V2} only.`, 'source');
    }
    if (blobKey !== undefined) {
      if (startKey !== undefined || endKey !== undefined) {
        throw ApiError.validation('Give either blob_key or start_blob_key and end_blob_key.', 'blob_key');
      }
      const start = await this.position(teamId, sessionId, blobKey);
      return { contentType: 'application/jsonl', body: this.lines(teamId, sessionId, start, start) };
    }
    if (startKey === undefined) {
      throw ApiError.validation(
        'blob_key (or start_blob_key and end_blob_key) is required.',
        'blob_key',
        'required',
      );
    }
    if (endKey === undefined) {
      throw ApiError.validation('end_blob_key is required with start_blob_key.', 'end_blob_key', 'required');
    }
    const start = await this.position(teamId, sessionId, startKey);
    const end = await this.position(teamId, sessionId, endKey);
    if (compare(start, end) > 0) {
      throw ApiError.validation(
        'start_blob_key comes after end_blob_key in the list of sources.',
        'start_blob_key',
      );
    }
    return { contentType: 'application/jsonl', body: this.lines(teamId, sessionId, start, end) };
  }

  private async position(teamId: number, sessionId: string, key: string): Promise<SnapshotPosition> {
    const id = chunkIdOf(key);
    const position = id ? await this.recordings.snapshotPosition(teamId, sessionId, id) : null;
    if (!position) throw ApiError.notFound('No such snapshot source in this recording.');
    return position;
  }

  /** `{"sources": [...]}`, written page by page. */
  private async *sources(teamId: number, sessionId: string): AsyncGenerator<string> {
    yield '{"sources":[';
    let after: SnapshotPosition | null = null;
    let first = true;
    for (;;) {
      const rows = await this.recordings.snapshotSources(teamId, sessionId, after, SOURCES_PAGE);
      if (!rows.length) break;
      const items = rows.map((r) =>
        JSON.stringify({
          source: BLOB_V2,
          blob_key: blobKeyOf(r.id),
          start_timestamp: r.firstTimestamp.toISOString(),
          end_timestamp: r.lastTimestamp.toISOString(),
        }),
      );
      yield (first ? '' : ',') + items.join(',');
      first = false;
      const last = rows[rows.length - 1];
      after = { firstTimestamp: last.firstTimestamp, id: last.id };
      if (rows.length < SOURCES_PAGE) break;
    }
    yield ']}';
  }

  /**
   * The lines of the chunks from `start` to `end` inclusive, in list order: chunks in the database one row at
   * a time, adjacent chunks of one packed object in one ranged GET (at most RANGE_MAX_BYTES), others one object
   * each.
   */
  private async *lines(
    teamId: number,
    sessionId: string,
    start: SnapshotPosition,
    end: SnapshotPosition,
  ): AsyncGenerator<Buffer | string> {
    let from: SnapshotPosition = start;
    let inclusive = true;
    const opener = new ChunkOpener(this.keys, this.logger, teamId, sessionId);
    for (;;) {
      const page = await this.locations.chunkLocations(
        teamId,
        sessionId,
        from,
        inclusive,
        end,
        LOCATIONS_PAGE,
      );
      for (let i = 0; i < page.length;) {
        const run = adjacentRun(page, i);
        if (run > 1) {
          const first = page[i];
          const last = page[i + run - 1];
          const offset = Number(first.objectOffset);
          const length = Number(last.objectOffset) + (last.objectLength as number) - offset;
          const bytes = await this.storage.readRange(first.objectKey as string, offset, length);
          for (const c of page.slice(i, i + run)) {
            const at = Number(c.objectOffset) - offset;
            if (!bytes) continue;
            const stored = bytes.subarray(at, at + (c.objectLength as number));
            yield* readChunkLines(await opener.open(c.id, c.encrypted, stored), c.windowId);
          }
        } else {
          yield* this.oneChunk(teamId, sessionId, page[i], opener);
        }
        i += run;
      }
      if (page.length < LOCATIONS_PAGE) break;
      const last = page[page.length - 1];
      from = { firstTimestamp: last.firstTimestamp, id: last.id };
      inclusive = false;
    }
  }

  /** One chunk's lines; one in the database is read from its row (it may have been packed meanwhile). */
  private async *oneChunk(
    teamId: number,
    sessionId: string,
    c: ChunkLocation,
    opener: ChunkOpener,
  ): AsyncGenerator<Buffer | string> {
    const chunk = c.inDatabase ? await this.recordings.snapshotData(teamId, sessionId, c.id) : c;
    // A chunk deleted meanwhile (its recording's organization deleted, or purged) is skipped.
    const data = chunk && (await this.storage.read({ data: null, ...chunk }));
    if (chunk && data) yield* readChunkLines(await opener.open(c.id, chunk.encrypted, data), chunk.windowId);
  }
}

/**
 * Opens the stored bytes of one recording's chunks: those in the clear as they are, encrypted ones with the
 * recording's data key, looked up once (at the first encrypted chunk). No key: the recording was deleted (404);
 * a key or bytes that do not open: a clear 500 of its own. Either is the response when no byte was written yet,
 * else the response is cut.
 */
class ChunkOpener {
  private key: Buffer | null | undefined;

  constructor(
    private readonly keys: RecordingKeys,
    private readonly logger: Logger,
    private readonly teamId: number,
    private readonly sessionId: string,
  ) {}

  async open(chunkId: string, encrypted: boolean, stored: Buffer): Promise<Buffer> {
    if (!encrypted) return stored;
    try {
      if (this.key === undefined) this.key = await this.keys.keyOf(this.teamId, this.sessionId);
      if (this.key === null) throw deletedRecording();
      return this.keys.open(this.key, chunkId, { teamId: this.teamId, sessionId: this.sessionId }, stored);
    } catch (error) {
      if (error instanceof RecordingDecryptionError) throw undecryptable(this.logger, error);
      throw error;
    }
  }
}

/** How many chunks from `i` are byte-adjacent in one packed object (within RANGE_MAX_BYTES); at least 1. */
function adjacentRun(page: readonly ChunkLocation[], i: number): number {
  const first = page[i];
  if (first.inDatabase || first.objectKey === null || first.objectOffset === null) return 1;
  const offset = Number(first.objectOffset);
  let n = 1;
  let next = offset + (first.objectLength as number);
  while (i + n < page.length) {
    const c = page[i + n];
    if (c.inDatabase || c.objectKey !== first.objectKey || c.objectOffset === null) break;
    if (Number(c.objectOffset) !== next) break;
    if (next + (c.objectLength as number) - offset > RANGE_MAX_BYTES) break;
    next += c.objectLength as number;
    n++;
  }
  return n;
}

function compare(a: SnapshotPosition, b: SnapshotPosition): number {
  const time = a.firstTimestamp.getTime() - b.firstTimestamp.getTime();
  if (time) return time;
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x < y ? -1 : x > y ? 1 : 0;
}
