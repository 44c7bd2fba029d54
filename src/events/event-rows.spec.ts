import { describe, expect, it } from '@jest/globals';
import { CaptureEvent } from '../ingest/capture-events.js';
import { DroppedValues } from '../ingest/capture-text.js';
import { columnarCutoff, eventsCutoff, partitionName } from './event-partitions.js';
import { eventTimestamp, toEventRow, type RowContext } from './event-rows.js';
import { linkedDistinctId } from './person-updates.js';

const NOW = new Date('2026-11-27T12:00:00.000Z');
const context = (over: Partial<RowContext> = {}): RowContext => ({
  now: NOW,
  ip: '203.0.113.7',
  anonymizeIps: false,
  sentAt: undefined,
  maxPropertiesBytes: 1024,
  ...over,
});
const entry = (event: Record<string, unknown>, index = 0) => new CaptureEvent(event, index, 'array');

describe('eventTimestamp (PostHog rules)', () => {
  it('shifts the timestamp by the client clock skew of sent_at', () => {
    const ts = eventTimestamp(
      { timestamp: '2026-11-27T13:00:00.000Z', sent_at: '2026-11-27T13:00:05.000Z' },
      {},
      NOW,
      undefined,
    );
    expect(ts.toISOString()).toBe('2026-11-27T11:59:55.000Z');
  });

  it('uses the batch sent_at (ms) when the event has none, unless $ignore_sent_at', () => {
    const event = { timestamp: '2026-11-27T13:00:00.000Z' };
    expect(eventTimestamp(event, {}, NOW, String(Date.parse('2026-11-27T13:00:01.000Z'))).toISOString()).toBe(
      '2026-11-27T11:59:59.000Z',
    );
    expect(eventTimestamp(event, { $ignore_sent_at: true }, NOW, '1795867201000').toISOString()).toBe(
      '2026-11-27T13:00:00.000Z',
    );
  });

  it('takes offset without a timestamp, and the time of receipt for future or unreadable times', () => {
    expect(eventTimestamp({ offset: 1500 }, {}, NOW, undefined).toISOString()).toBe(
      '2026-11-27T11:59:58.500Z',
    );
    expect(eventTimestamp({ timestamp: '2026-11-28T11:00:00Z' }, {}, NOW, undefined)).toEqual(
      new Date('2026-11-28T11:00:00Z'),
    );
    expect(eventTimestamp({ timestamp: '2026-11-28T11:00:01Z' }, {}, NOW, undefined)).toEqual(NOW);
    expect(eventTimestamp({ timestamp: 'soon' }, {}, NOW, undefined)).toEqual(NOW);
    expect(eventTimestamp({ timestamp: '+275760-09-13T00:00:00Z' }, {}, NOW, undefined)).toEqual(NOW);
  });
});

describe('toEventRow', () => {
  it('extracts the session, window, $set and sets $ip from the request', () => {
    const dropped = new DroppedValues();
    const row = toEventRow(
      entry({
        event: '$pageview',
        distinct_id: 42,
        properties: { token: 'phc_x', $session_id: 's1', $window_id: 'w1', $set: { a: 1 } },
      }),
      context(),
      dropped,
    );
    expect(row).toMatchObject({
      event: '$pageview',
      distinctId: '42',
      sessionId: 's1',
      windowId: 'w1',
      set: { a: 1 },
      processPerson: true,
      properties: { $ip: '203.0.113.7', $session_id: 's1', $window_id: 'w1', $set: { a: 1 } },
    });
    expect((row as { properties: object }).properties).not.toHaveProperty('token');
    expect((row as { uuid: string }).uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('builds the same row from a body known to be free of bad text, without checking it again', () => {
    const event = () => ({
      event: 'clicked',
      distinct_id: 'd',
      uuid: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
      $set: { plan: 'pro' },
      properties: {
        $session_id: 's',
        $set_once: { first: 'é' },
        list: [1, 'two', { three: 3 }],
        token: 'phc_x',
      },
    });
    const checked = toEventRow(entry(event()), context(), new DroppedValues());
    const dropped = new DroppedValues();
    const trusted = toEventRow(entry(event()), context({ withoutBadText: true }), dropped);
    expect(trusted).toEqual(checked);
    expect((trusted as { propertiesJson: string }).propertiesJson).toBe(
      (checked as { propertiesJson: string }).propertiesJson,
    );
    expect(dropped.count).toBe(0);
    // Without the mark the same values are checked: a NUL is dropped from the properties.
    const dirty = new DroppedValues();
    const row = toEventRow(
      entry({ event: 'x', distinct_id: 'd', properties: { a: 'x\u0000', b: 'ok' } }),
      context(),
      dirty,
    );
    expect((row as { properties: object }).properties).toEqual({ b: 'ok', $ip: '203.0.113.7' });
    expect(dirty.listed).toEqual([{ attr: '0__properties__a', problem: 'NUL character' }]);
  });

  it('drops $ip with anonymize_ips, even one the client sent', () => {
    const row = toEventRow(
      entry({ event: 'x', distinct_id: 'd', properties: { $ip: '198.51.100.1' } }),
      context({ anonymizeIps: true }),
      new DroppedValues(),
    );
    expect((row as { properties: object }).properties).not.toHaveProperty('$ip');
  });

  it('drops an event over the properties bound, or with NUL in its name, and 400s a malformed one', () => {
    const dropped = new DroppedValues();
    expect(
      toEventRow(
        entry({ event: 'x', distinct_id: 'd', properties: { big: 'x'.repeat(2000) } }),
        context(),
        dropped,
      ),
    ).toBe('too_large');
    expect(toEventRow(entry({ event: 'x\u0000', distinct_id: 'd' }), context(), dropped)).toBe('bad_text');
    expect(dropped.count).toBe(2);
    expect(() => toEventRow(entry({ distinct_id: 'd' }, 3), context(), dropped)).toThrow(
      expect.objectContaining({ attr: '3__event' }),
    );
    expect(() => toEventRow(entry({ event: 'x' }), context(), dropped)).toThrow(
      expect.objectContaining({ attr: '0__distinct_id' }),
    );
    expect(() =>
      toEventRow(entry({ event: 'x', distinct_id: 'd', uuid: 'nope' }), context(), dropped),
    ).toThrow(expect.objectContaining({ attr: '0__uuid' }));
  });

  it('cuts event names and distinct ids at 200 characters', () => {
    const row = toEventRow(
      entry({ event: 'e'.repeat(300), distinct_id: 'd'.repeat(300) }),
      context(),
      new DroppedValues(),
    );
    expect((row as { event: string }).event).toHaveLength(200);
    expect((row as { distinctId: string }).distinctId).toHaveLength(200);
  });
});

describe('partitions', () => {
  it('names a day; the cutoffs are the start of the first kept day and of the first row-stored day', () => {
    const day = Math.floor(NOW.getTime() / 86400000);
    expect(partitionName(day)).toBe('events_p20261127');
    expect(eventsCutoff(NOW.getTime(), 1).toISOString()).toBe('2026-11-27T00:00:00.000Z');
    expect(eventsCutoff(NOW.getTime(), 30).toISOString()).toBe('2026-10-29T00:00:00.000Z');
    // The columnar cutoff: the start of today minus the days (the partitions ending by then are converted).
    expect(columnarCutoff(NOW.getTime(), 2).toISOString()).toBe('2026-11-25T00:00:00.000Z');
  });
});

describe('person updates', () => {
  it('links $identify and $create_alias ids, never placeholders or itself', () => {
    expect(
      linkedDistinctId({ event: '$identify', distinctId: 'u', properties: { $anon_distinct_id: 'a' } }),
    ).toBe('a');
    expect(linkedDistinctId({ event: '$create_alias', distinctId: 'u', properties: { alias: 'b' } })).toBe(
      'b',
    );
    expect(
      linkedDistinctId({ event: '$identify', distinctId: 'u', properties: { $anon_distinct_id: 'null' } }),
    ).toBeNull();
    expect(
      linkedDistinctId({ event: '$identify', distinctId: 'u', properties: { $anon_distinct_id: 'u' } }),
    ).toBeNull();
    expect(
      linkedDistinctId({
        event: '$identify',
        distinctId: 'anonymous',
        properties: { $anon_distinct_id: 'a' },
      }),
    ).toBeNull();
    expect(linkedDistinctId({ event: 'other', distinctId: 'u', properties: { alias: 'b' } })).toBeNull();
  });
});
