import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { readCaptureBatch, readSnapshotEvent, readSnapshotEvents } from './capture-events.js';

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

describe('readCaptureBatch', () => {
  it('finds the token in token, $token, api_key, then properties.token of the first event', () => {
    expect(readCaptureBatch([{ token: 'phc_a', $token: 'x' }]).token).toBe('phc_a');
    expect(readCaptureBatch([{ $token: 'phc_b' }]).token).toBe('phc_b');
    expect(readCaptureBatch([{ api_key: 'phc_c' }]).token).toBe('phc_c');
    expect(readCaptureBatch([{ properties: { token: 'phc_d' } }, { token: 'phc_other' }]).token).toBe(
      'phc_d',
    );
    expect(readCaptureBatch({ properties: { token: 'phc_e' } }).token).toBe('phc_e');
    expect(readCaptureBatch([{ properties: {} }, { token: 'phc_second' }]).token).toBeNull();
    expect(readCaptureBatch([{ token: '  ' }]).token).toBeNull();
  });

  it('reads a {api_key, batch} body', () => {
    const batch = readCaptureBatch({ api_key: 'phc_batch', batch: [{ token: 'phc_event' }] });
    expect(batch.token).toBe('phc_batch');
    expect(batch.events[0].attrPrefix).toBe('batch__0__');
  });

  it('prefixes attrs with the index for arrays and nothing for a single event', () => {
    expect(readCaptureBatch([{}, {}]).events.map((e) => e.attrPrefix)).toEqual(['0__', '1__']);
    expect(readCaptureBatch({}).events.map((e) => e.attrPrefix)).toEqual(['']);
  });

  it.each([[42], ['text'], [null], [true]])('rejects the body %j', (body) => {
    expect(error(() => readCaptureBatch(body)).body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Expected a JSON array of events or one event object.',
      attr: null,
    });
  });

  it('rejects an empty array and a non-object event', () => {
    expect(error(() => readCaptureBatch([])).code).toBe('required');
    expect(error(() => readCaptureBatch([{}, 'x'])).attr).toBe('1');
  });
});

describe('readSnapshotEvent', () => {
  it('reads a full event', () => {
    const batch = readSnapshotEvent(
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
    });
  });

  it('defaults the window to the session, the source to web, and keys by a digest without uuid', () => {
    const batch = readSnapshotEvent(snapshot({ $snapshot_source: 'ios' }));
    expect(batch.windowId).toBe('s-1');
    expect(batch.snapshotSource).toBe('web');
    expect(batch.key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(readSnapshotEvent(snapshot()).key).toBe(batch.key);
    expect(readSnapshotEvent(snapshot({ $window_id: 'w-2' })).key).not.toBe(batch.key);
    expect(readSnapshotEvent(snapshot({ $snapshot_data: [{ ...rr[0], timestamp: 1001 }] })).key).not.toBe(
      batch.key,
    );
  });

  it('reads distinct_id from properties, and a numeric one as a string', () => {
    expect(readSnapshotEvent(snapshot({ distinct_id: 'p1' }, { distinct_id: undefined })).distinctId).toBe(
      'p1',
    );
    expect(readSnapshotEvent(snapshot({}, { distinct_id: 42 })).distinctId).toBe('42');
  });

  it('takes one rrweb event object as a one-element array', () => {
    expect(readSnapshotEvent(snapshot({ $snapshot_data: rr[0] })).events).toEqual(rr);
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
    const e = error(() => readSnapshotEvent(snapshot(properties)));
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
    const e = error(() => readSnapshotEvent(snapshot({}, top)));
    expect({ code: e.code, attr: e.attr }).toEqual({ code, attr });
  });

  it('accepts a distinct id of exactly 200 characters and a session id of 70', () => {
    const batch = readSnapshotEvent(
      snapshot({ $session_id: 'a'.repeat(70) }, { distinct_id: 'x'.repeat(200) }),
    );
    expect(batch.sessionId).toHaveLength(70);
    expect(batch.distinctId).toHaveLength(200);
  });
});

describe('readSnapshotEvents', () => {
  it('keeps only $snapshot events and names the failing one by its index', () => {
    const batch = readCaptureBatch([
      { event: '$pageview', properties: { token: 'phc_x' } },
      snapshot(),
      { event: '$autocapture' },
    ]);
    expect(readSnapshotEvents(batch).map((b) => b.sessionId)).toEqual(['s-1']);
    const bad = readCaptureBatch([{ event: '$pageview' }, snapshot(), snapshot({ $session_id: undefined })]);
    expect(error(() => readSnapshotEvents(bad)).attr).toBe('2__properties__$session_id');
  });
});
