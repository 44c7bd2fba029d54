/**
 * Parquet files of the object-files writer (object-files.ts), encoded by hyparquet-writer: one row group per page
 * of rows, streamed to the upload as each is encoded. Strings reach the encoder as UTF-8 already, a row group's
 * values of a column in one buffer (utf8Column), so encoding a file allocates native memory per column chunk, not
 * per value (docs/performance.md, "Memory").
 */
import { brotliCompressSync, gzipSync, zstdCompressSync } from 'node:zlib';
import type { SchemaElement } from 'hyparquet';
import { ByteWriter, ParquetWriter, schemaFromColumnData, type BasicType } from 'hyparquet-writer';
import type { ColumnKind, ExportRow } from '../export-models.js';
import type { DeliveryContext } from './destination.js';
import type { FileEncoder, ObjectSink } from './object-files.js';

export const PARQUET_TYPES: Record<ColumnKind, BasicType> = {
  text: 'STRING',
  json: 'JSON',
  integer: 'INT32',
  bigint: 'INT64',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
  timestamp: 'TIMESTAMP',
};

/**
 * A column's strings as UTF-8 byte arrays for the encoder: the values' bytes in one buffer, each value a view of it
 * (the encoder writes byte arrays as they are). Given strings, it encodes each with its own `TextEncoder` call, one
 * array buffer per value (some 15,000 per row group of events), native memory of which what malloc kept grew with
 * the file. The smallest and the largest value (in byte order, as the statistics compare them) are copies of their
 * own, shared by every value equal to them: the encoder keeps each row group's min and max until the footer is
 * written, and they must not hold the whole buffer till then. Values that are not strings (null) are kept as given.
 */
export function utf8Column(values: readonly unknown[]): unknown[] {
  let size = 0;
  for (const v of values) if (typeof v === 'string') size += Buffer.byteLength(v, 'utf8');
  const buffer = Buffer.allocUnsafeSlow(size);
  let at = 0;
  let min: Uint8Array | null = null;
  let max: Uint8Array | null = null;
  const views = values.map((v) => {
    if (typeof v !== 'string') return v;
    const bytes = buffer.subarray(at, at + buffer.write(v, at, 'utf8'));
    at += bytes.length;
    if (!min || Buffer.compare(bytes, min) < 0) min = bytes;
    if (!max || Buffer.compare(bytes, max) > 0) max = bytes;
    return bytes;
  });
  if (!min || !max) return views;
  const [low, high] = [min, max];
  const [lowCopy, highCopy] = [new Uint8Array(low), new Uint8Array(high)];
  return views.map((v) => {
    if (!(v instanceof Uint8Array)) return v;
    if (Buffer.compare(v, low) === 0) return lowCopy;
    return Buffer.compare(v, high) === 0 ? highCopy : v;
  });
}

/**
 * A column's values as the encoder takes them. A `json` value is the JSON text of its JSON text (a JSON string), the
 * bytes hyparquet-writer writes for a string in a JSON column: the files' content is what it was when the encoder
 * was given `JSON.stringify(value)`, and readers read the same string back.
 */
function columnValues(kind: ColumnKind, values: unknown[]): unknown[] {
  const present = (v: unknown) => v !== null && v !== undefined;
  if (kind === 'text') return utf8Column(values);
  if (kind === 'json') {
    return utf8Column(values.map((v) => (present(v) ? JSON.stringify(JSON.stringify(v)) : null)));
  }
  if (kind === 'bigint') return values.map((v) => (present(v) ? BigInt(v as number) : null));
  return values.map((v) => (present(v) ? v : null));
}

type ColumnSource = { name: string; type: BasicType; nullable: boolean; data: unknown[] };

/** Parquet: one row group per page of rows, streamed to the upload as they are encoded. */
export class ParquetEncoder implements FileEncoder {
  size = 0;
  private readonly bytes = new ByteWriter();
  private writer: ParquetWriter | null = null;
  /** The file's schema as its footer declares it (its JSON columns written as byte arrays: see `open`). */
  private footer: SchemaElement[] = [];

  constructor(
    private readonly ctx: DeliveryContext,
    private readonly upload: ObjectSink,
    private readonly compression: string | null,
  ) {}

  private columnData(rows: readonly ExportRow[]): ColumnSource[] {
    return this.ctx.model.columns.map((c) => ({
      name: c.name,
      type: PARQUET_TYPES[c.kind],
      nullable: true,
      data: columnValues(
        c.kind,
        rows.map((row) => row[c.name]),
      ),
    }));
  }

  /**
   * The file's writer; its schema is the model's columns (their types do not depend on the rows). The row groups are
   * written with JSON columns as plain byte arrays, whose values the encoder takes as given (for a JSON column it
   * encodes each value again, one buffer per value); the footer declares them JSON, as the file always did.
   */
  private open(): ParquetWriter {
    const columnData = this.columnData([]);
    this.footer = schemaFromColumnData({ columnData });
    const codec = (
      { zstd: 'ZSTD', snappy: 'SNAPPY', gzip: 'GZIP', brotli: 'BROTLI' } as Record<string, string>
    )[this.compression ?? ''];
    return new ParquetWriter({
      writer: this.bytes,
      schema: schemaFromColumnData({
        columnData: columnData.map((c) => (c.type === 'JSON' ? { ...c, type: 'BYTE_ARRAY' } : c)),
      }),
      codec: (codec ?? 'UNCOMPRESSED') as 'SNAPPY',
      compressors: {
        GZIP: (b: Uint8Array) => gzipSync(b),
        BROTLI: (b: Uint8Array) => brotliCompressSync(b),
        ZSTD: (b: Uint8Array) => zstdCompressSync(b),
      },
    });
  }

  async write(rows: readonly ExportRow[]): Promise<void> {
    if (!rows.length) return;
    this.writer ??= this.open();
    await this.writer.write({ columnData: this.columnData(rows), rowGroupSize: rows.length });
    await this.drain();
  }

  private async drain(): Promise<void> {
    const chunk = Buffer.from(this.bytes.getBytes());
    this.bytes.index = 0;
    this.size += chunk.length;
    await this.upload.write(chunk);
  }

  async end(): Promise<void> {
    // A file without rows (asked for by `emptyFile`): the model's columns and no row group, a valid Parquet file.
    this.writer ??= this.open();
    this.writer.schema = this.footer;
    await this.writer.finish();
    await this.drain();
    await this.upload.end();
  }
}
