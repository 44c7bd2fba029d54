import { describe, expect, it } from '@jest/globals';
import {
  activeMilliseconds,
  computeMetadata,
  consoleLevel,
  hrefOf,
  isActive,
  isClick,
  isKeypress,
  isMouseActivity,
  type RrwebEvent,
  sortByTime,
  START_URL_MAX_LENGTH,
} from './recording-metadata.js';

const inc = (timestamp: number, source: number, extra: Record<string, unknown> = {}): RrwebEvent => ({
  type: 3,
  timestamp,
  data: { source, ...extra },
});
const mouse = (timestamp: number, interaction: number) => inc(timestamp, 2, { type: interaction, id: 1 });
const move = (timestamp: number) => inc(timestamp, 1, { positions: [{ x: 1, y: 2, id: 3, timeOffset: 0 }] });
const mutation = (timestamp: number) => inc(timestamp, 0, { adds: [], removes: [] });
const meta = (timestamp: number, href: string): RrwebEvent => ({
  type: 4,
  timestamp,
  data: { href, width: 1280, height: 800 },
});
const full = (timestamp: number): RrwebEvent => ({
  type: 2,
  timestamp,
  data: { node: {}, initialOffset: {} },
});
const consoleEvent = (timestamp: number, level: unknown): RrwebEvent => ({
  type: 6,
  timestamp,
  data: { plugin: 'rrweb/console@1', payload: { level, payload: ['"x"'], trace: [] } },
});

describe('click_count', () => {
  it.each([
    ['Click', 2, true],
    ['DblClick', 4, true],
    ['TouchEnd', 9, true],
    ['ContextMenu', 3, true],
    ['MouseUp', 0, false],
    ['MouseDown', 1, false],
    ['Focus', 5, false],
    ['Blur', 6, false],
    ['TouchStart', 7, false],
  ])('mouse interaction %s (%i) counts: %s', (_name, interaction, expected) => {
    expect(isClick(mouse(1, interaction))).toBe(expected);
  });
  it('needs type 3 and source 2', () => {
    expect(isClick({ type: 2, timestamp: 1, data: { source: 2, type: 2 } })).toBe(false);
    expect(isClick(inc(1, 5, { type: 2 }))).toBe(false);
    expect(isClick({ type: 3, timestamp: 1 })).toBe(false);
    expect(isClick({ type: 3, timestamp: 1, data: 'compressed' })).toBe(false);
  });
});

describe('keypress_count and mouse_activity_count', () => {
  it('counts Input (source 5) as a keypress, nothing else', () => {
    expect(isKeypress(inc(1, 5, { text: 'a', isChecked: false }))).toBe(true);
    for (const source of [0, 1, 2, 3, 4, 6, 7, 12]) expect(isKeypress(inc(1, source))).toBe(false);
    expect(isKeypress({ type: 5, timestamp: 1, data: { source: 5 } })).toBe(false);
  });
  it.each([
    [1, true],
    [2, true],
    [6, true],
    [0, false],
    [3, false],
    [4, false],
    [5, false],
    [7, false],
    [12, false],
  ])('source %i is mouse activity: %s', (source, expected) => {
    expect(isMouseActivity(inc(1, source))).toBe(expected);
  });
});

describe('console counts', () => {
  it.each([
    ['log', 'log'],
    ['info', 'log'],
    ['debug', 'log'],
    ['trace', 'log'],
    ['count', 'log'],
    ['table', 'log'],
    [undefined, 'log'],
    [42, 'log'],
    ['warn', 'warn'],
    ['countReset', 'warn'],
    ['error', 'error'],
    ['assert', 'error'],
  ])('level %j counts as %s', (level, expected) => {
    expect(consoleLevel(consoleEvent(1, level))).toBe(expected);
  });
  it('ignores other plugins and other event types', () => {
    expect(
      consoleLevel({ type: 6, timestamp: 1, data: { plugin: 'rrweb/network@1', payload: {} } }),
    ).toBeNull();
    expect(consoleLevel({ type: 5, timestamp: 1, data: { plugin: 'rrweb/console@1' } })).toBeNull();
    expect(consoleLevel({ type: 6, timestamp: 1 })).toBeNull();
  });
  it('counts a payload without a level as log', () => {
    expect(consoleLevel({ type: 6, timestamp: 1, data: { plugin: 'rrweb/console@1' } })).toBe('log');
  });
});

describe('activity', () => {
  it('treats type 3 with sources 1-7 and 12 as active, mutations and other types as not', () => {
    for (const source of [1, 2, 3, 4, 5, 6, 7, 12]) expect(isActive(inc(1, source))).toBe(true);
    for (const source of [0, 8, 9, 10, 11, 13]) expect(isActive(inc(1, source))).toBe(false);
    expect(isActive(full(1))).toBe(false);
    expect(isActive(meta(1, 'https://x'))).toBe(false);
    expect(isActive(consoleEvent(1, 'log'))).toBe(false);
  });
});

describe('activeMilliseconds', () => {
  it('is 1 ms for a single active event, 0 for a single inactive one', () => {
    expect(activeMilliseconds([move(1000)])).toBe(1);
    expect(activeMilliseconds([full(1000)])).toBe(0);
    expect(activeMilliseconds([])).toBe(0);
  });

  it('keeps one segment while active events are at most 5000 ms apart', () => {
    expect(activeMilliseconds([move(0), move(4999), move(9998)])).toBe(9998);
    expect(activeMilliseconds([move(0), move(5000)])).toBe(5000);
  });

  it('starts a new segment at an active event more than 5000 ms after the previous active one', () => {
    // [0,0] and [5001,5001]: each counts its minimum of 1 ms.
    expect(activeMilliseconds([move(0), move(5001)])).toBe(2);
    // [0,2000] and [9000,10000].
    expect(activeMilliseconds([move(0), move(2000), move(9000), move(10000)])).toBe(3000);
  });

  it('lets inactive events extend the current segment', () => {
    // One segment from 0 to 60000: the mutation and console log extend it after the click.
    expect(activeMilliseconds([mouse(0, 2), mutation(30000), consoleEvent(60000, 'log')])).toBe(60000);
    // The gap is measured from the last active event, not the last event: [0, 4000] then [5500].
    expect(activeMilliseconds([move(0), mutation(4000), move(5500)])).toBe(4000 + 1);
    expect(activeMilliseconds([move(0), mutation(4000), move(4999)])).toBe(4999);
  });

  it('does not count a leading inactive segment, and ends it at the first active event', () => {
    // [0..3000] inactive (full snapshot, meta, mutation), then active from 3000 to 4000.
    expect(activeMilliseconds([full(0), meta(0, 'https://a'), mutation(3000), move(3000), move(4000)])).toBe(
      1000,
    );
    // An active event long after an inactive start is a new segment whatever the gap.
    expect(activeMilliseconds([full(0), move(20000), move(21000)])).toBe(1000);
  });

  it('sorts the events by time first', () => {
    expect(activeMilliseconds([move(10000), move(0), move(9000), move(1000)])).toBe(1000 + 1000);
  });
});

describe('computeMetadata', () => {
  const events: RrwebEvent[] = [
    meta(1_000, 'https://shop.example.com/'),
    full(1_000),
    move(1_500),
    mouse(2_000, 2),
    mouse(2_100, 4),
    mouse(2_200, 0),
    inc(3_000, 5, { text: 'a' }),
    inc(3_100, 5, { text: 'ab' }),
    inc(3_500, 3, { x: 0, y: 300 }),
    consoleEvent(4_000, 'log'),
    consoleEvent(4_100, 'warn'),
    consoleEvent(4_200, 'error'),
    consoleEvent(4_300, 'assert'),
    meta(20_000, 'https://shop.example.com/cart'),
    full(20_000),
    mouse(20_500, 9),
  ];

  it('counts each rule over the batch', () => {
    expect(computeMetadata(events)).toEqual({
      eventCount: 16,
      firstTimestamp: 1_000,
      lastTimestamp: 20_500,
      clickCount: 3,
      keypressCount: 2,
      mouseActivityCount: 5,
      consoleLogCount: 1,
      consoleWarnCount: 1,
      consoleErrorCount: 2,
      // Inactive [1000,1000]; active [1500 .. 20000] is split at 20500 (gap from 3500 is 17000 ms):
      // [1500, 20000] = 18500 ms (the console events and the second page load extend it), then [20500] = 1 ms.
      activeMs: 18_500 + 1,
      startUrl: { url: 'https://shop.example.com/', timestamp: 1_000 },
    });
  });

  it('takes start_url from the earliest event with an href, whatever the order of the batch', () => {
    const result = computeMetadata([
      meta(5_000, 'https://late.example.com/'),
      move(100),
      {
        type: 5,
        timestamp: 2_000,
        data: { tag: '$pageview', payload: { href: 'https://custom.example.com/' } },
      },
      meta(3_000, 'https://middle.example.com/'),
    ]);
    expect(result.startUrl).toEqual({ url: 'https://custom.example.com/', timestamp: 2_000 });
    expect(result.firstTimestamp).toBe(100);
    expect(result.lastTimestamp).toBe(5_000);
  });

  it('has no start_url when no event has an href', () => {
    expect(computeMetadata([move(1), { type: 4, timestamp: 2, data: { href: '' } }]).startUrl).toBeNull();
  });

  it('refuses an empty batch', () => {
    expect(() => computeMetadata([])).toThrow();
  });
});

describe('hrefOf', () => {
  it('reads data.href, else data.payload.href', () => {
    expect(hrefOf(meta(1, 'https://a/'))).toBe('https://a/');
    expect(hrefOf({ type: 5, timestamp: 1, data: { payload: { href: 'https://b/' } } })).toBe('https://b/');
    expect(hrefOf({ type: 5, timestamp: 1, data: { href: 7 } })).toBeNull();
    expect(hrefOf({ type: 2, timestamp: 1 })).toBeNull();
  });
  it('cuts a longer href to START_URL_MAX_LENGTH, never inside a surrogate pair', () => {
    const long = `https://a/${'x'.repeat(20_000_000)}`;
    expect(hrefOf(meta(1, long))).toBe(long.slice(0, START_URL_MAX_LENGTH));
    const emoji = `${'y'.repeat(START_URL_MAX_LENGTH - 1)}😀z`;
    expect(hrefOf(meta(1, emoji))).toBe('y'.repeat(START_URL_MAX_LENGTH - 1));
    // A NUL past the cut no longer matters; one before it still does.
    expect(hrefOf(meta(1, `${'a'.repeat(START_URL_MAX_LENGTH)}\u0000`))).toBe(
      'a'.repeat(START_URL_MAX_LENGTH),
    );
    expect(hrefOf(meta(1, 'https://a/\u0000'))).toBeNull();
  });
});

describe('sortByTime', () => {
  it('is stable for equal timestamps', () => {
    const a = { timestamp: 1, n: 'a' };
    const b = { timestamp: 0, n: 'b' };
    const c = { timestamp: 1, n: 'c' };
    expect(sortByTime([a, b, c]).map((x) => x.n)).toEqual(['b', 'a', 'c']);
  });
});
