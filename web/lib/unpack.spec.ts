import { describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { inflateField, type RrwebEvent, UnpackError, unpackEvent } from './unpack.js';

/**
 * Packs a value as posthog-js does (`gzipToString`: JSON text, UTF-8, gzip, then the bytes as a string of one
 * character per byte), with Node's zlib rather than the player's inflate library.
 */
const pack = (value: unknown): string =>
  gzipSync(Buffer.from(JSON.stringify(value), 'utf8')).toString('latin1');

const node = {
  type: 0,
  id: 1,
  childNodes: [
    {
      type: 2,
      id: 2,
      tagName: 'html',
      attributes: { lang: 'de' },
      childNodes: [{ type: 3, id: 3, textContent: 'Grüße aus Köln — 東京 🚀' }],
    },
  ],
};

describe('unpackEvent', () => {
  it('inflates a packed full snapshot, keeping non-ASCII text intact', () => {
    const data = { node, initialOffset: { top: 0, left: 0 } };
    const packed = { type: 2, timestamp: 1000, cv: '2024-10', data: pack(data) };
    expect(typeof packed.data).toBe('string');
    // One character per byte: nothing above 0xff.
    expect([...packed.data].every((c) => c.charCodeAt(0) <= 0xff)).toBe(true);
    expect(unpackEvent(packed)).toEqual({ type: 2, timestamp: 1000, data });
  });

  it('inflates each packed field of a mutation and leaves its other fields', () => {
    const texts = [{ id: 3, value: 'neu' }];
    const attributes = [{ id: 2, attributes: { class: 'open' } }];
    const removes = [{ parentId: 2, id: 9 }];
    const adds = [{ parentId: 2, nextId: null, node: { type: 3, id: 10, textContent: 'ß' } }];
    const event = {
      type: 3,
      timestamp: 2000,
      cv: '2024-10',
      data: {
        source: 0,
        isAttachIframe: false,
        texts: pack(texts),
        attributes: pack(attributes),
        removes: pack(removes),
        adds: pack(adds),
      },
    };
    expect(unpackEvent(event)).toEqual({
      type: 3,
      timestamp: 2000,
      data: { source: 0, isAttachIframe: false, texts, attributes, removes, adds },
    });
  });

  it('inflates empty packed arrays (posthog-js packs [] too)', () => {
    const event = {
      type: 3,
      timestamp: 1,
      cv: '2024-10',
      data: { source: 0, texts: pack([]), attributes: pack([]), removes: pack([]), adds: pack([]) },
    };
    expect(unpackEvent(event).data).toEqual({ source: 0, texts: [], attributes: [], removes: [], adds: [] });
  });

  it('inflates a stylesheet rule change, also when only one of adds/removes was sent', () => {
    const adds = [{ rule: '.a { color: red }', index: 0 }];
    const both = {
      type: 3,
      timestamp: 5,
      cv: '2024-10',
      data: { source: 8, id: 4, adds: pack(adds), removes: pack([{ index: 1 }]) },
    };
    expect(unpackEvent(both).data).toEqual({ source: 8, id: 4, adds, removes: [{ index: 1 }] });
    const onlyAdds = { type: 3, timestamp: 5, cv: '2024-10', data: { source: 8, id: 4, adds: pack(adds) } };
    expect(unpackEvent(onlyAdds).data).toEqual({ source: 8, id: 4, adds });
  });

  it('passes uncompressed events of older SDKs through as the same object', () => {
    const events: RrwebEvent[] = [
      { type: 4, timestamp: 1, data: { href: 'https://example.com/', width: 800, height: 600 } },
      { type: 2, timestamp: 2, data: { node, initialOffset: { top: 0, left: 0 } } },
      { type: 3, timestamp: 3, data: { source: 0, texts: [], attributes: [], removes: [], adds: [] } },
      { type: 3, timestamp: 4, data: { source: 1, positions: [{ x: 1, y: 2, id: 3, timeOffset: 0 }] } },
    ];
    for (const event of events) expect(unpackEvent(event)).toBe(event);
  });

  it('keeps fields that are already unpacked in a marked event, and drops the marker elsewhere', () => {
    const mixed = { type: 3, timestamp: 1, cv: '2024-10', data: { source: 0, texts: [], adds: pack([1]) } };
    expect(unpackEvent(mixed).data).toEqual({ source: 0, texts: [], adds: [1] });
    const move = { type: 3, timestamp: 1, cv: '2024-10', data: { source: 1, positions: [] } };
    expect(unpackEvent(move)).toEqual({ type: 3, timestamp: 1, data: { source: 1, positions: [] } });
  });

  it('refuses an unknown packing version and damaged data', () => {
    expect(() => unpackEvent({ type: 2, timestamp: 1, cv: '2030-01', data: pack({}) })).toThrow(UnpackError);
    expect(() => unpackEvent({ type: 2, timestamp: 1, cv: '2024-10', data: 'not gzip' })).toThrow(
      /not gzip data/,
    );
    const notJson = gzipSync(Buffer.from('{nope', 'utf8')).toString('latin1');
    expect(() => inflateField(notJson)).toThrow(/does not hold JSON/);
    // A truncated stream (a chunk cut short) is refused, not half-read.
    const whole = pack({ a: 'x'.repeat(1000) });
    expect(() => inflateField(whole.slice(0, whole.length - 10))).toThrow(UnpackError);
  });
});
