/**
 * Files of a run in an object store (S3 and S3-compatible stores, Azure Blob Storage): PostHog's keys, the JSON
 * Lines encoder (Parquet's is parquet-encoder.ts), and the writer that splits a run into files and writes their manifest. A store
 * gives the uploads (ObjectSink); everything else is shared, so every store names its objects alike.
 */
import { createBrotliCompress, createGzip, constants as zlib } from 'node:zlib';
import type { Transform } from 'node:stream';
import { s3CompressionProblem } from '../../destinations.js';
import { rowToJson, type ExportRow } from '../export-models.js';
import { nonRetryable } from '../export-errors.js';
import type { DeliveryContext, DestinationWriter } from './destination.js';
import { fileShape, type FileShape } from './posthog-formats.js';

type ParquetModule = typeof import('./parquet-encoder.js');
let parquetModule: Promise<ParquetModule> | null = null;
/**
 * The Parquet encoder and its library (hyparquet-writer), loaded by the first writer of a Parquet file (its
 * `open()`), not at start: a process that writes none (every API replica) neither carries it nor has its garbage
 * collector mark it.
 */
const loadParquet = (): Promise<ParquetModule> => (parquetModule ??= import('./parquet-encoder.js'));

export const FORMAT_EXTENSIONS = { JSONLines: 'jsonl', Parquet: 'parquet' } as const;
const COMPRESSION_EXTENSIONS: Record<string, string> = {
  gzip: 'gz',
  snappy: 'sz',
  brotli: 'br',
  zstd: 'zst',
  lz4: 'lz4',
};

/** PostHog's timestamps in keys: ISO 8601 with `+00:00`. */
export const isoKey = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, '+00:00');
const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The key prefix with PostHog's template variables filled in: `{year}`, `{month}`, `{day}`, `{hour}`,
 * `{minute}`, `{second}` (of the interval's end, UTC), `{data_interval_start}`, `{data_interval_end}` and
 * `{table}` (the model). Unknown variables are an error of the config.
 */
export function s3KeyPrefix(prefix: string, start: Date, end: Date, table: string): string {
  const vars: Record<string, string> = {
    year: String(end.getUTCFullYear()),
    month: pad(end.getUTCMonth() + 1),
    day: pad(end.getUTCDate()),
    hour: pad(end.getUTCHours()),
    minute: pad(end.getUTCMinutes()),
    second: pad(end.getUTCSeconds()),
    data_interval_start: isoKey(start),
    data_interval_end: isoKey(end),
    table,
  };
  return prefix.replace(/\{([^{}]*)\}/g, (whole, name: string) => {
    if (!(name in vars)) throw nonRetryable(`The S3 prefix uses an unknown template variable ${whole}.`);
    return vars[name];
  });
}

/** The key of file `n` of a run (PostHog's names: the interval, a file number when files are split). */
export function s3Key(
  prefix: string,
  start: Date,
  end: Date,
  format: keyof typeof FORMAT_EXTENSIONS,
  compression: string | null,
  fileNumber: number | null,
): string {
  let name = `${isoKey(start)}-${isoKey(end)}`;
  if (fileNumber !== null) name += `-${fileNumber}`;
  name += `.${FORMAT_EXTENSIONS[format]}`;
  if (compression) name += `.${COMPRESSION_EXTENSIONS[compression]}`;
  const key = prefix ? `${prefix.replace(/\/+$/, '')}/${name}` : name;
  return key.replace(/^\/+/, '');
}

/** One object being written to a store: bytes in, then `end` (it becomes visible whole) or `abort`. */
export interface ObjectSink {
  readonly key: string;
  /** Bytes written so far (as stored: compressed). */
  readonly bytes: number;
  write(chunk: Buffer): Promise<void>;
  end(): Promise<void>;
  abort(): Promise<void>;
}

/** What a writer needs of a store. */
export interface ObjectStore {
  /** How logs name the place, e.g. `s3://bucket`. */
  readonly where: string;
  open(): Promise<void>;
  upload(key: string): ObjectSink;
  put(key: string, body: string, contentType: string): Promise<void>;
  /** A store's error as the run's error (retryable or not). */
  classify(err: unknown): unknown;
  destroy(): void;
}

/** A file format encoder feeding an upload: rows in, bytes out (compressed when asked). */
export interface FileEncoder {
  /** Uncompressed bytes taken so far (for max_file_size_mb). */
  readonly size: number;
  write(rows: readonly ExportRow[]): Promise<void>;
  end(): Promise<void>;
}

/** How many rows of JSON Lines are encoded into one chunk (a few hundred KB). */
const JSON_LINES_SLICE = 500;

class JsonLinesEncoder implements FileEncoder {
  size = 0;
  private readonly compressor: Transform | null;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: DeliveryContext,
    private readonly upload: ObjectSink,
    compression: string | null,
  ) {
    this.compressor =
      compression === 'gzip'
        ? createGzip()
        : compression === 'brotli'
          ? createBrotliCompress({ params: { [zlib.BROTLI_PARAM_QUALITY]: 5 } })
          : null;
    this.compressor?.on('data', (chunk: Buffer) => {
      this.pending = this.pending.then(() => this.upload.write(chunk));
    });
  }

  /**
   * The rows' lines, encoded and written JSON_LINES_SLICE rows at a time: what is in flight is the text of a
   * slice, not of a whole page (the bytes written are the same, only cut in smaller chunks).
   */
  async write(rows: readonly ExportRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += JSON_LINES_SLICE) {
      let text = '';
      for (let j = i; j < Math.min(i + JSON_LINES_SLICE, rows.length); j++) {
        text += JSON.stringify(rowToJson(this.ctx.model, rows[j])) + '\n';
      }
      const chunk = Buffer.from(text, 'utf8');
      this.size += chunk.length;
      if (!this.compressor) {
        await this.upload.write(chunk);
        continue;
      }
      await new Promise<void>((resolve, reject) =>
        this.compressor!.write(chunk, (err) => (err ? reject(err) : resolve())),
      );
      await this.pending;
    }
  }

  async end(): Promise<void> {
    if (this.compressor) {
      await new Promise<void>((resolve, reject) => {
        this.compressor!.once('end', resolve);
        this.compressor!.once('error', reject);
        this.compressor!.end();
        this.compressor!.resume();
      });
      await this.pending;
    }
    await this.upload.end();
  }
}

/**
 * A run's rows as files in an object store: JSON Lines or Parquet, compressed as configured, under the prefix
 * with PostHog's template variables filled in; events with PostHog's file columns (posthog-formats.ts). An
 * interval without rows writes no file (but with `emptyFile`). Keys depend only on the run's interval and a file number, so a
 * retried attempt or a re-run of the interval overwrites what an earlier one wrote and never adds objects.
 * With `max_file_size_mb`, a file is closed once it holds that many (uncompressed) megabytes and the next is
 * started (`…-0`, `…-1`, …), and a manifest listing them is written last (`…_manifest.json`), as PostHog does.
 */
export class ObjectFilesWriter implements DestinationWriter {
  private readonly format: 'JSONLines' | 'Parquet';
  private readonly compression: string | null;
  private readonly maxFileBytes: number | null;
  private readonly prefix: string;
  private fileNumber = 0;
  private current: { upload: ObjectSink; encoder: FileEncoder } | null = null;
  /** The Parquet encoder's module (with hyparquet-writer), loaded by `open()` for a Parquet export. */
  private parquet: ParquetModule | null = null;
  private readonly files: string[] = [];
  private bytes = 0;
  /** The columns written (PostHog's for events) and the context the encoders read them from. */
  private readonly shape: FileShape;
  private readonly fileCtx: DeliveryContext;

  constructor(
    private readonly ctx: DeliveryContext,
    private readonly store: ObjectStore,
    /**
     * Write a file even for an interval without rows (on-demand file exports: the file is what was asked for): an
     * empty JSON Lines file, a Parquet file with the model's columns and no rows. Batch export runs write none.
     */
    private readonly options: { emptyFile?: boolean } = {},
  ) {
    this.shape = fileShape(ctx.model);
    this.fileCtx = { ...ctx, model: this.shape.model };
    const c = ctx.config;
    this.format = (c.file_format as 'JSONLines' | 'Parquet' | undefined) ?? 'JSONLines';
    this.compression = (c.compression as string | null | undefined) ?? null;
    const maxMb = c.max_file_size_mb as number | null | undefined;
    this.maxFileBytes = maxMb ? maxMb * 1024 * 1024 : null;
    this.prefix = s3KeyPrefix(
      (c.prefix as string | undefined) ?? '',
      ctx.dataIntervalStart,
      ctx.dataIntervalEnd,
      ctx.model.name,
    );
  }

  async open(): Promise<void> {
    // Refused at save (the same table); an export stored before that check still fails here, for good.
    const problem = s3CompressionProblem(this.format, this.compression);
    if (problem) throw nonRetryable(problem);
    if (this.format === 'Parquet') this.parquet = await loadParquet();
    await this.store.open();
  }

  private parquetModule(): ParquetModule {
    if (!this.parquet) throw new Error('a Parquet file is written only after open()');
    return this.parquet;
  }

  private startFile(): { upload: ObjectSink; encoder: FileEncoder } {
    const key = s3Key(
      this.prefix,
      this.ctx.dataIntervalStart,
      this.ctx.dataIntervalEnd,
      this.format,
      this.compression,
      this.maxFileBytes ? this.fileNumber : null,
    );
    this.fileNumber++;
    const upload = this.store.upload(key);
    const encoder =
      this.format === 'Parquet'
        ? new (this.parquetModule().ParquetEncoder)(this.fileCtx, upload, this.compression)
        : new JsonLinesEncoder(this.fileCtx, upload, this.compression);
    return { upload, encoder };
  }

  async write(page: readonly ExportRow[]): Promise<void> {
    const rows = this.shape.row ? page.map(this.shape.row) : page;
    try {
      // Pages are split into slices, so a file ends close to max_file_size_mb whatever the page size.
      const slice = this.maxFileBytes ? 500 : rows.length;
      for (let i = 0; i < rows.length; i += slice) {
        this.current ??= this.startFile();
        await this.current.encoder.write(rows.slice(i, i + slice));
        if (this.maxFileBytes && this.current.encoder.size >= this.maxFileBytes) await this.endFile();
      }
    } catch (err) {
      throw this.store.classify(err);
    }
  }

  private async endFile(): Promise<void> {
    const file = this.current!;
    this.current = null;
    await file.encoder.end();
    this.bytes += file.upload.bytes;
    this.files.push(file.upload.key);
  }

  async finish(): Promise<{ bytes: number }> {
    try {
      if (!this.files.length && !this.current && this.options.emptyFile) this.current = this.startFile();
      if (this.current) await this.endFile();
      if (!this.files.length) {
        // An interval without rows writes nothing, no manifest either, as PostHog's exports.
        await this.ctx.log('INFO', 'No rows in this interval: no file was written.');
        return { bytes: 0 };
      }
      if (this.maxFileBytes) {
        const manifestKey =
          `${this.prefix ? `${this.prefix.replace(/\/+$/, '')}/` : ''}${isoKey(this.ctx.dataIntervalStart)}-${isoKey(this.ctx.dataIntervalEnd)}_manifest.json`.replace(
            /^\/+/,
            '',
          );
        await this.store.put(manifestKey, JSON.stringify({ files: this.files }), 'application/json');
      }
      await this.ctx.log(
        'INFO',
        `Wrote ${this.files.length} file${this.files.length === 1 ? '' : 's'} to ${this.store.where}/${this.files[0] ?? ''}${this.files.length > 1 ? ' …' : ''}.`,
      );
      return { bytes: this.bytes };
    } catch (err) {
      throw this.store.classify(err);
    }
  }

  async close(): Promise<void> {
    if (this.current) await this.current.upload.abort();
    this.current = null;
    this.store.destroy();
  }
}
