import { describe, expect, it } from '@jest/globals';
import {
  currentIndex,
  ENTRY_TEXT_MAX,
  entriesOf,
  filterEntries,
  type InspectorEntry,
  mergeEntries,
} from './inspector-entries.js';

const consoleEvent = (timestamp: number, level: string, ...args: string[]) => ({
  type: 6,
  timestamp,
  data: { plugin: 'rrweb/console@1', payload: { level, payload: args, trace: [] } },
});

describe('entriesOf', () => {
  it('reads page views from Meta events and $url_changed', () => {
    expect(
      entriesOf({ type: 4, timestamp: 10, data: { href: 'https://shop.example/', width: 1, height: 1 } }),
    ).toEqual([
      { timestamp: 10, kind: 'page', label: 'page view', text: 'https://shop.example/', marker: 'page' },
    ]);
    expect(
      entriesOf({
        type: 5,
        timestamp: 11,
        data: { tag: '$url_changed', payload: { href: 'https://shop.example/cart' } },
      }),
    ).toEqual([
      { timestamp: 11, kind: 'page', label: 'navigation', text: 'https://shop.example/cart', marker: 'page' },
    ]);
  });

  it('reads console messages, their JSON-encoded arguments as text, errors marked', () => {
    expect(entriesOf(consoleEvent(20, 'error', '"Payment failed"', '{"code":42}'))).toEqual([
      { timestamp: 20, kind: 'console', label: 'error', text: 'Payment failed {"code":42}', marker: 'error' },
    ]);
    expect(entriesOf(consoleEvent(21, 'warn', 'not json'))[0]).toMatchObject({
      label: 'warn',
      text: 'not json',
      marker: null,
    });
    expect(entriesOf(consoleEvent(22, 'assert', '"x"'))[0].marker).toBe('error');
    expect(entriesOf(consoleEvent(23, 'log', `"${'y'.repeat(2000)}"`))[0].text).toHaveLength(ENTRY_TEXT_MAX);
  });

  it('reads each request of the network plugin, failed ones marked', () => {
    const entries = entriesOf({
      type: 6,
      timestamp: 30,
      data: {
        plugin: 'rrweb/network@1',
        payload: {
          requests: [
            { name: 'https://api.example/cart', method: 'POST', responseStatus: 500, timestamp: 29 },
            { name: 'https://cdn.example/a.js', initiatorType: 'script' },
            { method: 'GET' },
          ],
        },
      },
    });
    expect(entries).toEqual([
      {
        timestamp: 29,
        kind: 'network',
        label: 'POST',
        text: 'https://api.example/cart → 500',
        marker: 'error',
      },
      { timestamp: 30, kind: 'network', label: 'GET', text: 'https://cdn.example/a.js', marker: null },
    ]);
  });

  it('has nothing for the page’s own events and malformed plugin data', () => {
    expect(entriesOf({ type: 3, timestamp: 1, data: { source: 2, type: 2, id: 1 } })).toEqual([]);
    expect(entriesOf({ type: 2, timestamp: 1, data: { node: {} } })).toEqual([]);
    expect(entriesOf({ type: 6, timestamp: 1, data: { plugin: 'rrweb/console@1' } })).toEqual([]);
    expect(entriesOf({ type: 6, timestamp: 1, data: { plugin: 'other', payload: {} } })).toEqual([]);
  });
});

const entry = (
  timestamp: number,
  kind: InspectorEntry['kind'],
  text: string,
  label = 'log',
): InspectorEntry => ({
  timestamp,
  kind,
  label,
  text,
  marker: null,
});

describe('mergeEntries, filterEntries, currentIndex', () => {
  it('keeps time order across batches (windows interleave), equal times in arrival order', () => {
    const list: InspectorEntry[] = [];
    mergeEntries(list, [entry(10, 'console', 'a'), entry(30, 'console', 'c')]);
    mergeEntries(list, [entry(20, 'page', 'b'), entry(30, 'network', 'd'), entry(5, 'console', 'z')]);
    expect(list.map((e) => e.text)).toEqual(['z', 'a', 'b', 'c', 'd']);
  });

  it('filters by kind and by text in the text or the label, any case', () => {
    const list = [
      entry(1, 'console', 'Payment FAILED', 'error'),
      entry(2, 'page', 'https://x/'),
      entry(3, 'network', 'y'),
    ];
    expect(filterEntries(list, new Set(['console', 'page']), '').map((e) => e.timestamp)).toEqual([1, 2]);
    expect(
      filterEntries(list, new Set(['console', 'page', 'network']), 'failed').map((e) => e.timestamp),
    ).toEqual([1]);
    expect(filterEntries(list, new Set(['console']), 'ERROR').map((e) => e.timestamp)).toEqual([1]);
    expect(filterEntries(list, new Set(['network']), 'failed')).toEqual([]);
  });

  it('finds the last line at or before a time', () => {
    const list = [
      entry(10, 'console', 'a'),
      entry(20, 'console', 'b'),
      entry(20, 'console', 'c'),
      entry(40, 'page', 'd'),
    ];
    expect(currentIndex(list, 5)).toBe(-1);
    expect(currentIndex(list, 10)).toBe(0);
    expect(currentIndex(list, 25)).toBe(2);
    expect(currentIndex(list, 1000)).toBe(3);
    expect(currentIndex([], 10)).toBe(-1);
  });
});
