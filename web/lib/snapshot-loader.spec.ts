import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { type LoadBatch, LoadError, loadSnapshots, planRanges } from './snapshot-loader.js';

const pack = (value: unknown): string =>
  gzipSync(Buffer.from(JSON.stringify(value), 'utf8')).toString('latin1');
const iso = (ms: number) => new Date(ms).toISOString();

/** Five chunks; chunks 2 and 3 (window b) overlap chunk 1 (window a) in time. */
const T0 = Date.UTC(2026, 10, 21, 10);
const chunks: { key: string; lines: [string, Record<string, unknown>][] }[] = [
  {
    key: 'k1',
    lines: [
      ['a', { type: 4, timestamp: T0, data: { href: 'https://example.com/', width: 800, height: 600 } }],
      [
        'a',
        {
          type: 2,
          timestamp: T0 + 1,
          cv: '2024-10',
          data: pack({ node: { type: 0, id: 1, childNodes: [] } }),
        },
      ],
      ['a', { type: 3, timestamp: T0 + 8000, data: { source: 2, type: 2, id: 1, x: 0, y: 0 } }],
    ],
  },
  {
    key: 'k2',
    lines: [
      [
        'b',
        { type: 4, timestamp: T0 + 2000, data: { href: 'https://example.com/b', width: 800, height: 600 } },
      ],
      ['b', { type: 2, timestamp: T0 + 2001, data: { node: { type: 0, id: 1, childNodes: [] } } }],
    ],
  },
  {
    key: 'k3',
    lines: [['b', { type: 3, timestamp: T0 + 3000, data: { source: 2, type: 2, id: 1, x: 0, y: 0 } }]],
  },
  { key: 'k4', lines: [['a', { type: 3, timestamp: T0 + 9000, data: { source: 1, positions: [] } }]] },
  { key: 'k5', lines: [['a', { type: 3, timestamp: T0 + 12_000, data: { source: 3, id: 1, x: 0, y: 9 } }]] },
];
const startOf = (c: (typeof chunks)[number]) => Math.min(...c.lines.map(([, e]) => e.timestamp as number));
const endOf = (c: (typeof chunks)[number]) => Math.max(...c.lines.map(([, e]) => e.timestamp as number));

describe('planRanges', () => {
  it('reads the first source alone, then doubles up to the maximum', () => {
    const sizes = (n: number, max?: number) => planRanges([...Array(n).keys()], max).map((r) => r.length);
    expect(sizes(0)).toEqual([]);
    expect(sizes(1)).toEqual([1]);
    expect(sizes(5)).toEqual([1, 2, 2]);
    expect(sizes(40)).toEqual([1, 2, 4, 8, 16, 9]);
    expect(sizes(6, 2)).toEqual([1, 2, 2, 1]);
    expect(planRanges(['a', 'b', 'c', 'd'])).toEqual([['a'], ['b', 'c'], ['d']]);
  });
});

describe('loadSnapshots (against a loopback server)', () => {
  let server: Server;
  let base: string;
  const requests: { url: string; authorization?: string }[] = [];

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ url: `${url.pathname}${url.search}`, authorization: req.headers.authorization });
    if (url.pathname === '/missing/snapshots') {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null }),
      );
      return;
    }
    if (!url.searchParams.has('source')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const realtime = {
        source: 'realtime',
        blob_key: 'x',
        start_timestamp: iso(T0),
        end_timestamp: iso(T0),
      };
      const sources = chunks.map((c) => ({
        source: 'blob_v2',
        blob_key: c.key,
        start_timestamp: iso(startOf(c)),
        end_timestamp: iso(endOf(c)),
      }));
      res.end(JSON.stringify({ sources: [...sources, realtime] }));
      return;
    }
    const single = url.searchParams.get('blob_key');
    const from = chunks.findIndex((c) => c.key === (single ?? url.searchParams.get('start_blob_key')));
    const to = chunks.findIndex((c) => c.key === (single ?? url.searchParams.get('end_blob_key')));
    res.writeHead(200, { 'Content-Type': 'application/jsonl' });
    // Written in small pieces that cut lines (and characters) apart, as a network would.
    const body = Buffer.from(
      chunks
        .slice(from, to + 1)
        .flatMap((c) => c.lines.map((l) => JSON.stringify(l) + '\n'))
        .join(''),
      'utf8',
    );
    let offset = 0;
    const step = () => {
      if (offset >= body.length) return res.end();
      res.write(body.subarray(offset, offset + 37));
      offset += 37;
      setTimeout(step, 1);
    };
    step();
  };

  beforeAll(async () => {
    server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('lists, then streams the sources in ranges, unpacked, saying how far everything has arrived', async () => {
    requests.length = 0;
    const batches: LoadBatch[] = [];
    const result = await loadSnapshots({
      url: `${base}/rec/snapshots`,
      headers: { Authorization: 'Bearer phx_test' },
      onBatch: (b) => batches.push(b),
    });
    expect(result).toEqual({ sources: 5, events: 8, unreadable: 0, skippedSources: 1 });
    expect(requests.map((r) => r.url)).toEqual([
      '/rec/snapshots',
      '/rec/snapshots?source=blob_v2&blob_key=k1',
      '/rec/snapshots?source=blob_v2&start_blob_key=k2&end_blob_key=k3',
      '/rec/snapshots?source=blob_v2&start_blob_key=k4&end_blob_key=k5',
    ]);
    expect(requests.every((r) => r.authorization === 'Bearer phx_test')).toBe(true);

    const events = batches.flatMap((b) => b.events);
    expect(events.map((e) => [e.windowId, e.event.timestamp - T0])).toEqual([
      ['a', 0],
      ['a', 1],
      ['a', 8000],
      ['b', 2000],
      ['b', 2001],
      ['b', 3000],
      ['a', 9000],
      ['a', 12_000],
    ]);
    // Unpacked on the way.
    expect(events[1].event).toEqual({
      type: 2,
      timestamp: T0 + 1,
      data: { node: { type: 0, id: 1, childNodes: [] } },
    });

    // Never claims an event has arrived before it did: every event is at or after the knownUntil before it.
    let known = -Infinity;
    for (const batch of batches) {
      for (const e of batch.events) expect(e.event.timestamp).toBeGreaterThanOrEqual(known);
      known = Math.max(known, batch.knownUntil);
    }
    // After the first source: window b's chunk starts at +2 s, so only up to there is complete.
    const afterFirst = batches.find((b) => b.loadedSources === 1);
    expect(afterFirst?.knownUntil).toBe(T0 + 2000);
    const last = batches[batches.length - 1];
    expect([last.knownUntil, last.loadedSources, last.totalSources]).toEqual([Infinity, 5, 5]);
  });

  it('says why when the service refuses', async () => {
    const failure = loadSnapshots({ url: `${base}/missing/snapshots`, onBatch: () => undefined });
    await expect(failure).rejects.toBeInstanceOf(LoadError);
    await expect(failure).rejects.toMatchObject({ status: 404, message: 'Not found.' });
  });

  it('reports a recording without sources as complete and empty', async () => {
    const empty = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"sources":[]}');
    });
    await new Promise<void>((resolve) => empty.listen(0, '127.0.0.1', resolve));
    const batches: LoadBatch[] = [];
    try {
      const result = await loadSnapshots({
        url: `http://127.0.0.1:${(empty.address() as AddressInfo).port}/s`,
        onBatch: (b) => batches.push(b),
      });
      expect(result.sources).toBe(0);
      expect(batches).toEqual([{ events: [], knownUntil: Infinity, loadedSources: 0, totalSources: 0 }]);
    } finally {
      await new Promise((resolve) => empty.close(resolve));
    }
  });
});
