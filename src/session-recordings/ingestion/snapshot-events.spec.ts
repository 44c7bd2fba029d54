import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../common/errors/api-error.js';
import { readCaptureBatch } from '../../ingest/capture-events.js';
import { DroppedValues } from '../../ingest/capture-text.js';
import { readSnapshotEvent, readSnapshotEvents } from './snapshot-events.js';
import type { SnapshotBatch } from './snapshot-batch.js';

const rr = [{ type: 4, timestamp: 1000, data: { href: 'https://a/' } }];
const snapshot = (properties: Record<string, unknown> = {}, top: Record<string, unknown> = {}) => ({
  event: '$snapshot',
  distinct_id: 'd1',
  properties: { $session_id: 's-1', $snapshot_data: rr, ...properties },
  ...top,
});

function error(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected an ApiError');
}

/** readSnapshotEvent of an event that is not dropped. */
const read = (event: Record<string, unknown>, prefix = '', dropped = new DroppedValues()) => {
  const batch = readSnapshotEvent(event, prefix, dropped);
  expect(batch).not.toBeNull();
  return batch as SnapshotBatch;
};

describe('readSnapshotEvent', () => {
  it('reads a full event', () => {
    const batch = read(
      snapshot(
        { $window_id: 'w-1', $snapshot_source: 'mobile', $set: { email: 'a@b.c' }, $set_once: { first: 1 } },
        { uuid: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f' },
      ),
    );
    expect(batch).toEqual({
      key: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
      sessionId: 's-1',
      windowId: 'w-1',
      distinctId: 'd1',
      snapshotSource: 'mobile',
      events: rr,
      set: { email: 'a@b.c' },
      setOnce: { first: 1 },
      processPerson: true,
    });
  });

  it('reads $process_person_profile false (a personless snapshot) and $unset', () => {
    const batch = read(snapshot({ $process_person_profile: false, $unset: ['email'] }));
    expect(batch.processPerson).toBe(false);
    expect(batch.unset).toEqual(['email']);
  });

  it('defaults the window to the session, the source to web, and keys by a digest without uuid', () => {
    const batch = read(snapshot({ $snapshot_source: 'ios' }));
    expect(batch.windowId).toBe('s-1');
    expect(batch.snapshotSource).toBe('web');
    expect(batch.key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(read(snapshot()).key).toBe(batch.key);
    expect(read(snapshot({ $window_id: 'w-2' })).key).not.toBe(batch.key);
    expect(read(snapshot({ $snapshot_data: [{ ...rr[0], timestamp: 1001 }] })).key).not.toBe(batch.key);
  });

  it('reads distinct_id from properties, and a numeric one as a string', () => {
    expect(read(snapshot({ distinct_id: 'p1' }, { distinct_id: undefined })).distinctId).toBe('p1');
    expect(read(snapshot({}, { distinct_id: 42 })).distinctId).toBe('42');
  });

  it('takes one rrweb event object as a one-element array', () => {
    expect(read(snapshot({ $snapshot_data: rr[0] })).events).toEqual(rr);
  });

  it.each([
    [{ $session_id: undefined }, 'required', 'properties__$session_id'],
    [{ $session_id: '' }, 'required', 'properties__$session_id'],
    [{ $session_id: 7 }, 'invalid_input', 'properties__$session_id'],
    [{ $session_id: 'a'.repeat(71) }, 'max_length', 'properties__$session_id'],
    [{ $session_id: 'has space' }, 'invalid_input', 'properties__$session_id'],
    [{ $session_id: 'semi;colon' }, 'invalid_input', 'properties__$session_id'],
    [{ $window_id: 'w/1' }, 'invalid_input', 'properties__$window_id'],
    [{ $snapshot_data: undefined }, 'required', 'properties__$snapshot_data'],
    [{ $snapshot_data: [] }, 'required', 'properties__$snapshot_data'],
    [{ $snapshot_data: 'abc' }, 'invalid_input', 'properties__$snapshot_data'],
    [{ $snapshot_data: [1] }, 'invalid_input', 'properties__$snapshot_data__0'],
    [{ $snapshot_data: [{ timestamp: 1 }] }, 'invalid_input', 'properties__$snapshot_data__0__type'],
    [
      { $snapshot_data: [{ type: 2.5, timestamp: 1 }] },
      'invalid_input',
      'properties__$snapshot_data__0__type',
    ],
    [{ $snapshot_data: [...rr, { type: 3 }] }, 'invalid_input', 'properties__$snapshot_data__1__timestamp'],
    [
      { $snapshot_data: [{ type: 3, timestamp: '1' }] },
      'invalid_input',
      'properties__$snapshot_data__0__timestamp',
    ],
    [
      { $snapshot_data: [{ type: 3, timestamp: -1 }] },
      'invalid_input',
      'properties__$snapshot_data__0__timestamp',
    ],
    [
      { $snapshot_data: [{ type: 3, timestamp: 1e20 }] },
      'invalid_input',
      'properties__$snapshot_data__0__timestamp',
    ],
  ])('rejects properties %j with %s at %s', (properties, code, attr) => {
    const e = error(() => read(snapshot(properties)));
    expect(e.getStatus()).toBe(400);
    expect({ code: e.code, attr: e.attr }).toEqual({ code, attr });
  });

  it.each([
    [{ distinct_id: undefined }, 'required', 'distinct_id'],
    [{ distinct_id: '' }, 'required', 'distinct_id'],
    [{ distinct_id: { id: 1 } }, 'invalid_input', 'distinct_id'],
    [{ distinct_id: 'x'.repeat(201) }, 'max_length', 'distinct_id'],
    [{ uuid: 5 }, 'invalid_input', 'uuid'],
    [{ uuid: 'u'.repeat(101) }, 'invalid_input', 'uuid'],
    [{ properties: 'x' }, 'invalid_input', 'properties'],
    [{ properties: undefined }, 'required', 'properties'],
  ])('rejects event fields %j with %s at %s', (top, code, attr) => {
    const e = error(() => read(snapshot({}, top)));
    expect({ code: e.code, attr: e.attr }).toEqual({ code, attr });
  });

  it('accepts a distinct id of exactly 200 characters and a session id of 70', () => {
    const batch = read(snapshot({ $session_id: 'a'.repeat(70) }, { distinct_id: 'x'.repeat(200) }));
    expect(batch.sessionId).toHaveLength(70);
    expect(batch.distinctId).toHaveLength(200);
  });
});

describe('readSnapshotEvents', () => {
  it('keeps only $snapshot events and names the failing one by its index', async () => {
    const batch = readCaptureBatch([
      { event: '$pageview', properties: { token: 'phc_x' } },
      snapshot(),
      { event: '$autocapture' },
    ]);
    expect((await readSnapshotEvents(batch)).map((b) => b.sessionId)).toEqual(['s-1']);
    const bad = readCaptureBatch([{ event: '$pageview' }, snapshot(), snapshot({ $session_id: undefined })]);
    const rejected = await readSnapshotEvents(bad).then(
      () => null,
      (e: unknown) => e,
    );
    expect(rejected).toBeInstanceOf(ApiError);
    expect((rejected as ApiError).attr).toBe('2__properties__$session_id');
  });
});

describe('values that cannot be stored (NUL, lone surrogates)', () => {
  const NUL = 'a\u0000b';
  const LONE = 'a\ud800b';

  it.each([
    ['NUL', NUL, 'NUL character'],
    ['a lone surrogate', LONE, 'lone UTF-16 surrogate'],
  ])('drops an event whose distinct_id holds %s, and notes it', async (_name, value, problem) => {
    const dropped = new DroppedValues();
    const batch = readCaptureBatch([snapshot({}, { distinct_id: value }), snapshot({ $session_id: 's-2' })]);
    const kept = await readSnapshotEvents(batch, dropped);
    expect(kept.map((b) => b.sessionId)).toEqual(['s-2']);
    expect(dropped.count).toBe(1);
    expect(dropped.listed).toEqual([{ attr: '0__distinct_id', problem }]);
  });

  it('drops an event whose session id holds NUL', async () => {
    const dropped = new DroppedValues();
    expect(readSnapshotEvent(snapshot({ $session_id: NUL }), '', dropped)).toBeNull();
    expect(dropped.listed).toEqual([{ attr: 'properties__$session_id', problem: 'NUL character' }]);
  });

  it('drops a bad uuid (the content keys the event) and a bad window id (the session stands for it)', () => {
    const dropped = new DroppedValues();
    const batch = read(snapshot({ $window_id: LONE }, { uuid: NUL }), '', dropped);
    expect(batch.windowId).toBe('s-1');
    expect(batch.key).toMatch(/^sha256:/);
    expect(dropped.listed.map((d) => d.attr)).toEqual(['properties__$window_id', 'uuid']);
  });

  it('drops the offending $set and $set_once properties, keys or values, at any depth', () => {
    const dropped = new DroppedValues();
    const batch = read(
      snapshot({
        $set: {
          email: 'a@b.c',
          bad: NUL,
          [`k${NUL}`]: 1,
          nested: { ok: 1, no: LONE, list: ['x', NUL, 'y'] },
        },
        $set_once: { first: LONE, second: 'fine' },
      }),
      '',
      dropped,
    );
    expect(batch.set).toEqual({ email: 'a@b.c', nested: { ok: 1, list: ['x', 'y'] } });
    expect(batch.setOnce).toEqual({ second: 'fine' });
    expect(dropped.count).toBe(5);
    expect(dropped.listed.map((d) => d.attr)).toEqual([
      'properties__$set__bad',
      'properties__$set__ka\ufffdb',
      'properties__$set__nested__no',
      'properties__$set__nested__list__1',
      'properties__$set_once__first',
    ]);
  });

  it('keeps the rrweb events exactly as captured, NUL and lone surrogates included', () => {
    const events = [
      { type: 3, timestamp: 1, data: { source: 5, text: NUL } },
      { type: 4, timestamp: 2, data: { href: LONE } },
    ];
    const dropped = new DroppedValues();
    expect(read(snapshot({ $snapshot_data: events }), '', dropped).events).toEqual(events);
    expect(dropped.count).toBe(0);
  });

  it('treats __proto__, constructor and toString as plain keys', () => {
    const set = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": "c", "toString": "t"}') as Record<
      string,
      unknown
    >;
    const batch = read(snapshot({ $set: set }));
    expect(Object.keys(batch.set).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getPrototypeOf(batch.set)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(batch.set)).toBe('{"__proto__":{"polluted":1},"constructor":"c","toString":"t"}');
  });
});
