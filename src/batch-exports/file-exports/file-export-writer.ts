import type { Writable } from 'node:stream';
import type { RecordingVisibility } from '../../recording-access-rules/recording-visibility.service.js';
import type { BoundExportModel } from '../../stores/export-models.module.js';
import type { DeliveryContext } from '../runs/destinations/destination.js';
import {
  ObjectFilesWriter,
  s3Key,
  type ObjectSink,
  type ObjectStore,
} from '../runs/destinations/object-files.js';
import type { ExportSourceRepository, SourceRange } from '../runs/export-source.repository.js';
import type { FileExportEntity } from './file-export.entity.js';

/** What producing one file needs besides the export. */
export interface FileSource {
  /** Null: nothing is read (the file of a range known to hold no rows). */
  source: ExportSourceRepository | null;
  model: BoundExportModel;
  /** Sessions: what the export's creator may watch (undefined for the other models). */
  visibility: RecordingVisibility | undefined;
  pageSize: number;
  pageMaxBytes: number;
  retentionDays: number;
  now: Date;
}

/** The file's name: the model, the range and the format's extension. */
export function fileName(entity: Pick<FileExportEntity, 'model' | 'startAt' | 'endAt' | 'format'>): string {
  const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `${entity.model}-${iso(entity.startAt)}-${iso(entity.endAt)}.${entity.format === 'Parquet' ? 'parquet' : 'jsonl'}`;
}

export const CONTENT_TYPES = { JSONLines: 'application/jsonl', Parquet: 'application/vnd.apache.parquet' };

/** The key the writer gives the file of an export written under `prefix` (one file, no compression). */
export function objectKeyOf(prefix: string, entity: FileExportEntity): string {
  return s3Key(prefix, entity.startAt, entity.endAt, entity.format, null, null);
}

/**
 * Writes the export's file to `store` with the batch exports' object-files writer (JSON Lines, or Parquet with one
 * row group per page; events with PostHog's file columns), reading the rows through the export source in pages
 * (BATCH_EXPORT_PAGE_SIZE rows, BATCH_EXPORT_PAGE_MAX_BYTES bytes): memory is bounded by a page and an upload part,
 * whatever the range holds; a range without rows gives a valid empty file. `between` is called after each page
 * (the cancel check); it stops the read by throwing.
 */
export async function writeExportFile(
  entity: FileExportEntity,
  from: FileSource,
  store: ObjectStore,
  prefix: string,
  signal: AbortSignal,
  between: () => Promise<void>,
): Promise<{ rows: number; bytes: number }> {
  const context = {
    runId: entity.id,
    attempt: 1,
    teamId: entity.teamId,
    dataIntervalStart: entity.startAt,
    dataIntervalEnd: entity.endAt,
    model: from.model,
    type: 'S3',
    config: { file_format: entity.format, compression: null, prefix },
    signal,
    log: async () => undefined,
  };
  // The object-files writer reads the model, the interval, the file settings and the log of a run's context.
  // A range without rows still gives a file (PostHog's exports always have content): an empty JSON Lines file, a
  // Parquet file with the model's columns and no rows.
  const writer = new ObjectFilesWriter(context as unknown as DeliveryContext, store, { emptyFile: true });
  const range: SourceRange = {
    teamId: entity.teamId,
    start: entity.startAt,
    end: entity.endAt,
    // Read by time, as a backfill run: no export cursor.
    xidFrom: null,
    xidTo: null,
    now: from.now,
    defaultRetentionDays: from.retentionDays,
    visibility: from.visibility,
  };
  let rows = 0;
  try {
    await writer.open();
    const pages = from.source?.pages(from.model, range, from.pageSize, from.pageMaxBytes) ?? [];
    for await (const page of pages) {
      await writer.write(page);
      rows += page.length;
      await between();
    }
    const { bytes } = await writer.finish();
    return { rows, bytes };
  } finally {
    await writer.close();
  }
}

/**
 * The HTTP response as the store of one streamed file: each chunk written as it is encoded, waiting for the
 * client to take it (backpressure), so a slow download holds at most a page in memory.
 */
export function responseStore(res: Writable): ObjectStore {
  const sink = (key: string): ObjectSink => {
    let bytes = 0;
    return {
      key,
      get bytes() {
        return bytes;
      },
      async write(chunk: Buffer) {
        if (!chunk.length) return;
        bytes += chunk.length;
        if (res.destroyed) throw new Error('the client went away');
        if (!res.write(chunk)) {
          await new Promise<void>((resolve, reject) => {
            const done = () => {
              res.off('drain', done);
              res.off('close', closed);
              resolve();
            };
            const closed = () => {
              res.off('drain', done);
              reject(new Error('the client went away'));
            };
            res.once('drain', done);
            res.once('close', closed);
          });
        }
      },
      end: async () => undefined,
      abort: async () => undefined,
    };
  };
  return {
    where: 'the response',
    open: async () => undefined,
    upload: sink,
    put: async () => undefined,
    classify: (err) => err,
    destroy: () => undefined,
  };
}
