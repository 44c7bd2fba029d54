import { describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { LineSplitter, parseSnapshotLine } from './snapshot-lines.js';

const pack = (value: unknown): string =>
  gzipSync(Buffer.from(JSON.stringify(value), 'utf8')).toString('latin1');

describe('LineSplitter', () => {
  it('returns complete lines only, across chunks, with \\n or \\r\\n', () => {
    const splitter = new LineSplitter();
    expect(splitter.push('["a",1]\n["b"')).toEqual(['["a",1]']);
    expect(splitter.push(',2]\r\n["c",3]\n')).toEqual(['["b",2]', '["c",3]']);
    expect(splitter.push('["d",4]')).toEqual([]);
    expect(splitter.flush()).toEqual(['["d",4]']);
    expect(splitter.flush()).toEqual([]);
  });

  it('keeps multi-byte characters split between network chunks intact (with a streaming decoder)', () => {
    const bytes = Buffer.from('["w",{"t":"Köln 🚀"}]\n', 'utf8');
    const decoder = new TextDecoder();
    const splitter = new LineSplitter();
    const lines: string[] = [];
    // One byte at a time: every character boundary is cut.
    for (const byte of bytes)
      lines.push(...splitter.push(decoder.decode(Uint8Array.of(byte), { stream: true })));
    lines.push(...splitter.push(decoder.decode()), ...splitter.flush());
    expect(lines).toEqual(['["w",{"t":"Köln 🚀"}]']);
  });
});

describe('parseSnapshotLine', () => {
  const meta = { type: 4, timestamp: 10, data: { href: 'https://example.com/', width: 1, height: 1 } };

  it('reads the service line ["window", event] and unpacks packed events', () => {
    const data = { node: { type: 0, id: 1, childNodes: [] }, initialOffset: { top: 0, left: 0 } };
    const packed = { type: 2, timestamp: 11, cv: '2024-10', data: pack(data) };
    expect(parseSnapshotLine(JSON.stringify(['w1', meta]))).toEqual({
      events: [{ windowId: 'w1', event: meta }],
      unreadable: 0,
    });
    expect(parseSnapshotLine(JSON.stringify(['w1', packed]))).toEqual({
      events: [{ windowId: 'w1', event: { type: 2, timestamp: 11, data } }],
      unreadable: 0,
    });
  });

  it('reads the older blob lines {window_id, data: [...]}, windowId, bare events and events as JSON text', () => {
    const click = { type: 3, timestamp: 12, data: { source: 2, type: 2, id: 5, x: 1, y: 1 } };
    expect(parseSnapshotLine(JSON.stringify({ window_id: 'w2', data: [meta, click] })).events).toEqual([
      { windowId: 'w2', event: meta },
      { windowId: 'w2', event: click },
    ]);
    expect(
      parseSnapshotLine(JSON.stringify({ windowId: 'w3', data: [JSON.stringify(click)] })).events,
    ).toEqual([{ windowId: 'w3', event: click }]);
    expect(parseSnapshotLine(JSON.stringify(meta)).events).toEqual([{ windowId: '', event: meta }]);
  });

  it('counts what it cannot read instead of failing the stream', () => {
    expect(parseSnapshotLine('')).toEqual({ events: [], unreadable: 0 });
    expect(parseSnapshotLine('{not json')).toEqual({ events: [], unreadable: 1 });
    expect(parseSnapshotLine('["w"]')).toEqual({ events: [], unreadable: 1 });
    expect(parseSnapshotLine('["w", {"type": "2", "timestamp": 1}]')).toEqual({ events: [], unreadable: 1 });
    expect(parseSnapshotLine('["w", {"type": 2, "timestamp": 1, "cv": "2024-10", "data": "junk"}]')).toEqual({
      events: [],
      unreadable: 1,
    });
    expect(parseSnapshotLine(JSON.stringify({ window_id: 'w', data: [meta, 'junk', 5] }))).toEqual({
      events: [{ windowId: 'w', event: meta }],
      unreadable: 2,
    });
  });
});
