import { describe, expect, it } from '@jest/globals';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Yielder } from '../../common/time/yielder.js';
import {
  appendLines,
  chunkText,
  readChunkLines,
  snapshotLine,
  splitIntoChunks,
  timeOrder,
  type WindowLines,
} from './snapshot-chunks.js';

const event = (timestamp: number, text = '') => ({ type: 3, timestamp, data: { source: 5, text } });

async function windowOf(events: ReturnType<typeof event>[]): Promise<WindowLines> {
  const window: WindowLines = { windowId: 'w', timestamps: [], lines: [], sizes: [] };
  await appendLines(window, events, new Yielder());
  return window;
}

async function readAll(data: Buffer, windowId = 'w'): Promise<string> {
  let text = '';
  for await (const piece of readChunkLines(data, windowId)) text += piece.toString();
  return text;
}

describe('snapshot chunks', () => {
  it('serialises each event as one [window_id, event] line and counts its UTF-8 bytes', async () => {
    const window = await windowOf([event(1, 'é')]);
    expect(window.lines).toEqual(['["w",{"type":3,"timestamp":1,"data":{"source":5,"text":"é"}}]']);
    expect(window.sizes).toEqual([Buffer.byteLength(window.lines[0]) + 1]);
  });

  it('orders by time, stable for equal timestamps, without sorting what is already ordered', () => {
    expect(timeOrder([1, 2, 2, 3])).toBeNull();
    expect(timeOrder([3, 1, 2, 1])).toEqual([1, 3, 2, 0]);
  });

  it('splits a window by events and by bytes, a larger single event alone', async () => {
    const window = await windowOf([
      event(5),
      event(1),
      event(2),
      event(4),
      event(3),
      event(6, 'x'.repeat(500)),
    ]);
    const byEvents = await splitIntoChunks(window, { maxEvents: 2, maxBytes: 1e6 }, new Yielder());
    expect(byEvents.map((c) => [c.firstTimestamp, c.lastTimestamp, c.lines.length])).toEqual([
      [1, 2, 2],
      [3, 4, 2],
      [5, 6, 2],
    ]);
    const size = window.sizes[0];
    const byBytes = await splitIntoChunks(window, { maxEvents: 100, maxBytes: size * 3 }, new Yielder());
    expect(byBytes.map((c) => c.lines.length)).toEqual([3, 2, 1]);
    expect(byBytes[2].firstTimestamp).toBe(6);
    // Every line is kept once, in time order.
    expect(
      byBytes
        .flatMap((c) => c.lines)
        .map((l) => (JSON.parse(l) as [string, { timestamp: number }])[1].timestamp),
    ).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('reads a stored chunk back as the same lines, and an older array chunk as lines too', async () => {
    const window = await windowOf([event(1), event(2, '\u0000 and \ud800 kept')]);
    const [chunk] = await splitIntoChunks(window, { maxEvents: 10, maxBytes: 1e6 }, new Yielder());
    const data = gzipSync(chunkText(chunk));
    expect(await readAll(data)).toBe(gunzipSync(data).toString());
    const lines = (await readAll(data))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual([
      ['w', event(1)],
      ['w', event(2, '\u0000 and \ud800 kept')],
    ]);
    const legacy = gzipSync(JSON.stringify([event(1), event(2)]));
    expect(await readAll(legacy, 'old')).toBe(
      `${snapshotLine('old', event(1))}\n${snapshotLine('old', event(2))}\n`,
    );
  });
});
