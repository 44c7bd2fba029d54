import { describe, expect, it } from '@jest/globals';
import { applyUpdate } from './person-properties.js';
import { emptyFold, foldPersonEvent, type PersonEvent, unsetKeys } from './person-event-updates.js';

type Change = Pick<PersonEvent, 'set' | 'setOnce'> & { unset: string[] };

/** Applies each event by itself, in order, as PostHog's person-update.ts does: $set_once, $set, then $unset. */
function oneByOne(start: Record<string, unknown>, events: Change[]): Record<string, unknown> {
  let properties = { ...start };
  for (const e of events) {
    properties = applyUpdate(properties, { set: e.set ?? {}, setOnce: e.setOnce ?? {}, unset: e.unset });
  }
  return properties;
}

function folded(start: Record<string, unknown>, events: Change[]): Record<string, unknown> {
  const update = emptyFold();
  for (const e of events) foldPersonEvent(update, e);
  return applyUpdate(start, update);
}

const ev = (
  set: Record<string, unknown> | null,
  setOnce: Record<string, unknown> | null,
  unset: string[] = [],
) => ({
  set,
  setOnce,
  unset,
});

describe('foldPersonEvent', () => {
  const cases: [string, Record<string, unknown>, Change[], Record<string, unknown>][] = [
    ['$unset after $set removes the key', {}, [ev({ plan: 'pro' }, null), ev(null, null, ['plan'])], {}],
    [
      '$set after $unset keeps the key',
      { plan: 'free' },
      [ev(null, null, ['plan']), ev({ plan: 'pro' }, null)],
      { plan: 'pro' },
    ],
    [
      '$set_once after $unset sets the key',
      { plan: 'free' },
      [ev(null, null, ['plan']), ev(null, { plan: 'once' })],
      { plan: 'once' },
    ],
    [
      '$set_once of a present key is ignored',
      { plan: 'free' },
      [ev(null, { plan: 'once' })],
      { plan: 'free' },
    ],
    ['the first $set_once wins', {}, [ev(null, { a: 1 }), ev(null, { a: 2 })], { a: 1 }],
    ['the last $set wins', {}, [ev({ a: 1 }, null), ev({ a: 2 }, null)], { a: 2 }],
    ['$set_once after $set is ignored', {}, [ev({ a: 1 }, null), ev(null, { a: 2 })], { a: 1 }],
    ['$set after $set_once replaces it', {}, [ev(null, { a: 1 }), ev({ a: 2 }, null)], { a: 2 }],
    ['within one event $unset comes last', { a: 0 }, [ev({ a: 1 }, { b: 2 }, ['a', 'b'])], {}],
    ['within one event $set beats $set_once', {}, [ev({ a: 1 }, { a: 2 })], { a: 1 }],
    ['$unset of an absent key changes nothing', { a: 1 }, [ev(null, null, ['zz'])], { a: 1 }],
    [
      '__proto__ is a plain key',
      {},
      [ev(JSON.parse('{"__proto__":{"x":1}}') as Record<string, unknown>, null)],
      JSON.parse('{"__proto__":{"x":1}}') as Record<string, unknown>,
    ],
  ];
  it.each(cases)('%s, as applying each event in turn', (_name, start, events, expected) => {
    expect(folded(start, events)).toEqual(expected);
    expect(oneByOne(start, events)).toEqual(expected);
    expect(Object.getPrototypeOf(folded(start, events))).toBe(Object.prototype);
  });

  it('gives what applying the events one by one gives, over random sequences', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const keys = ['a', 'b', 'c'];
    const pick = () => {
      const out: Record<string, unknown> = {};
      for (const k of keys) if (rand(3) === 0) out[k] = rand(100);
      return Object.keys(out).length ? out : null;
    };
    for (let round = 0; round < 500; round++) {
      const start: Record<string, unknown> = rand(2) ? { a: -1 } : {};
      const events = Array.from({ length: 1 + rand(5) }, () =>
        ev(
          pick(),
          pick(),
          keys.filter(() => rand(4) === 0),
        ),
      );
      expect(folded(start, events)).toEqual(oneByOne(start, events));
    }
  });
});

describe('unsetKeys', () => {
  it('takes the names of an array or the keys of an object, strings only, filtered by `usable`', () => {
    expect(unsetKeys(['a', 1, 'b'])).toEqual(['a', 'b']);
    expect(unsetKeys({ a: 1, b: null })).toEqual(['a', 'b']);
    expect(unsetKeys('a')).toEqual([]);

    expect(unsetKeys(Array.from({ length: 1500 }, (_, i) => `k${i}`))).toHaveLength(1000);
  });
});
