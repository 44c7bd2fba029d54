import { describe, expect, it } from '@jest/globals';
import { brotliCompressSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { ByteWriter, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import type { ExportRow, ModelColumn } from '../export-models.js';
import type { DeliveryContext } from './destination.js';
import type { ObjectSink } from './object-files.js';
import { PARQUET_TYPES, ParquetEncoder, utf8Column } from './parquet-encoder.js';

const COLUMNS: ModelColumn[] = [
  { name: 'uuid', kind: 'text' },
  { name: 'event', kind: 'text' },
  { name: 'timestamp', kind: 'timestamp' },
  { name: 'properties', kind: 'json' },
  { name: 'team_id', kind: 'integer' },
  { name: 'version', kind: 'bigint' },
  { name: 'score', kind: 'float' },
  { name: 'is_identified', kind: 'boolean' },
  { name: 'elements_chain', kind: 'text' },
  { name: 'person_properties', kind: 'json' },
];
const CODECS: Record<string, string> = { zstd: 'ZSTD', snappy: 'SNAPPY', gzip: 'GZIP', brotli: 'BROTLI' };

/** Rows of every kind: distinct and repeated strings, nulls, nested JSON; `text` makes the strings' content. */
function rows(count: number, text: (n: number) => string): ExportRow[] {
  return Array.from({ length: count }, (_, n) => ({
    uuid: `0190c0de-${String(n).padStart(4, '0')}-7000-8000-${text(n)}`,
    event: n % 3 ? '$pageview' : `custom ${text(n % 7)}`,
    timestamp: new Date(Date.UTC(2026, 10, 30, 0, 0, n)),
    properties:
      n % 11 ? { n, $current_url: `https://example.com/${text(n)}`, nested: { list: [n, null] } } : null,
    team_id: 2,
    version: n * 1000,
    score: n / 4,
    is_identified: n % 2 === 0,
    elements_chain: n % 5 ? '' : null,
    person_properties: n % 4 ? { email: `${text(n)}@example.com` } : {},
  }));
}

/**
 * The file as hyparquet-writer writes the pages given as its users usually do (strings, a JSON column's value as
 * its `JSON.stringify` text): what the encoder wrote before it gave the encoder UTF-8 bytes.
 */
function reference(pages: ExportRow[][], compression: string | null): Buffer {
  const bytes = new ByteWriter();
  const columnData = (page: ExportRow[]) =>
    COLUMNS.map((c) => ({
      name: c.name,
      type: PARQUET_TYPES[c.kind],
      nullable: true,
      data: page.map((row) => {
        const v = row[c.name];
        if (v === null || v === undefined) return null;
        if (c.kind === 'json') return JSON.stringify(v);
        return c.kind === 'bigint' ? BigInt(v as number) : v;
      }),
    }));
  const writer = new ParquetWriter({
    writer: bytes,
    schema: schemaFromColumnData({ columnData: columnData([]) }),
    codec: (CODECS[compression ?? ''] ?? 'UNCOMPRESSED') as 'SNAPPY',
    compressors: { GZIP: gzipSync, BROTLI: brotliCompressSync, ZSTD: zstdCompressSync },
  });
  for (const page of pages) void writer.write({ columnData: columnData(page), rowGroupSize: page.length });
  void writer.finish();
  return Buffer.from(bytes.getBytes());
}

/** The file the encoder writes of the pages, one upload chunk per row group and one for the footer. */
async function encode(pages: ExportRow[][], compression: string | null) {
  const chunks: Buffer[] = [];
  const upload = {
    key: 'file.parquet',
    bytes: 0,
    write: async (chunk: Buffer) => void chunks.push(chunk),
    end: async () => undefined,
    abort: async () => undefined,
  } as ObjectSink;
  const ctx = { model: { name: 'events', columns: COLUMNS } } as unknown as DeliveryContext;
  const encoder = new ParquetEncoder(ctx, upload, compression);
  for (const page of pages) await encoder.write(page);
  await encoder.end();
  const file = Buffer.concat(chunks);
  return { file, chunks, size: encoder.size };
}

const arrayBuffer = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

const hex = (n: number) => (n * 2654435761).toString(16).padStart(12, '0').slice(-12);

describe('the Parquet encoder', () => {
  it.each([null, 'zstd', 'snappy'])(
    'writes the bytes the library writes of the same rows given as strings (compression %s)',
    async (compression) => {
      const pages = [rows(3000, hex), rows(1234, (n) => hex(n + 5000)), rows(1, hex)];
      const { file, chunks, size } = await encode(pages, compression);
      expect(file.equals(reference(pages, compression))).toBe(true);
      expect(chunks).toHaveLength(4);
      expect(size).toBe(file.length);
    },
  );

  it('writes non-ASCII strings (and a lone surrogate as U+FFFD) that read back as the library writes them', async () => {
    const text = (n: number) => ['é', '日本語', '🦔', 'plain', 'x\ud800y'][n % 5] + hex(n).slice(0, n % 13);
    const pages = [rows(500, text), rows(20, text)];
    const { file } = await encode(pages, null);
    const written = await parquetReadObjects({ file: arrayBuffer(file) });
    const expected = await parquetReadObjects({ file: arrayBuffer(reference(pages, null)) });
    expect(written).toEqual(expected);
    expect(written[6].event).toBe('custom 日本語' + hex(6).slice(0, 6));
    expect(written[4].uuid).toBe('0190c0de-0004-7000-8000-x\ufffdy' + hex(4).slice(0, 4));
    // The JSON columns read back as the JSON text of the value, as before.
    expect(JSON.parse(written[1].properties as string)).toEqual(pages[0][1].properties);
    expect(parquetMetadata(arrayBuffer(file)).schema.map((e) => e.converted_type)).toEqual(
      parquetMetadata(arrayBuffer(reference(pages, null))).schema.map((e) => e.converted_type),
    );
  });

  it('writes a file without rows: the columns and no row group, as the library does', async () => {
    const { file } = await encode([], null);
    expect(file.equals(reference([], null))).toBe(true);
    expect(parquetMetadata(arrayBuffer(file)).row_groups).toEqual([]);
  });
});

describe('utf8Column', () => {
  it("gives a column's strings as views of one buffer, the min and max as copies of their own", () => {
    const values = ['b', null, 'ab', 'zz', 'b', 'zz', 'é', '', 'ab'];
    const column = utf8Column(values) as (Uint8Array | null)[];
    expect(column.map((v) => (v ? Buffer.from(v).toString('utf8') : v))).toEqual(values);
    // In byte order 'é' (0xC3 0xA9) is the largest value and '' the smallest.
    const [min, max] = [column[7]!, column[6]!];
    expect([min.byteLength, min.buffer.byteLength, max.buffer.byteLength]).toEqual([0, 0, 2]);
    const shared = column[0]!.buffer;
    expect(shared.byteLength).toBe(Buffer.byteLength(values.filter((v) => v !== null).join('')));
    for (const i of [2, 3, 4, 5, 8]) expect(column[i]!.buffer).toBe(shared);
    expect(column[1]).toBeNull();
  });

  it('gives the same copy for every value equal to the min or the max', () => {
    const column = utf8Column(['m', 'a', 'z', 'a', 'z']) as Uint8Array[];
    expect(column[1]).toBe(column[3]);
    expect(column[2]).toBe(column[4]);
    expect(column[1].buffer).not.toBe(column[0].buffer);
    expect(column[2].buffer).not.toBe(column[0].buffer);
  });
});
