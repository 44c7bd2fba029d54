import { describe, expect, it } from '@jest/globals';
import type { WindowEvent } from './snapshot-lines.js';
import { SKIP_AFTER_MS, SKIP_BEFORE_MS, Timeline } from './timeline.js';

const meta = (windowId: string, timestamp: number): WindowEvent => ({
  windowId,
  event: { type: 4, timestamp, data: { href: 'https://example.com/', width: 1, height: 1 } },
});
const full = (windowId: string, timestamp: number): WindowEvent => ({
  windowId,
  event: { type: 2, timestamp, data: {} },
});
const click = (windowId: string, timestamp: number): WindowEvent => ({
  windowId,
  event: { type: 3, timestamp, data: { source: 2, type: 2, id: 1, x: 0, y: 0 } },
});
const mutation = (windowId: string, timestamp: number): WindowEvent => ({
  windowId,
  event: { type: 3, timestamp, data: { source: 0, texts: [], attributes: [], removes: [], adds: [] } },
});

describe('Timeline.windowAt', () => {
  it('shows the window of the latest page load or interaction, not of background mutations', () => {
    const t = new Timeline(1000, 9000);
    t.add([meta('a', 1000), full('a', 1000), click('a', 2000)]);
    t.add([meta('b', 3000), full('b', 3000), mutation('a', 3500), click('b', 4000)]);
    t.add([click('a', 6000), mutation('b', 7000)]);
    expect(t.windowAt(500)).toBe('a');
    expect(t.windowAt(2999)).toBe('a');
    expect(t.windowAt(3000)).toBe('b');
    expect(t.windowAt(3600)).toBe('b');
    expect(t.windowAt(6000)).toBe('a');
    expect(t.windowAt(8000)).toBe('a');
    expect(t.windows).toEqual(['a', 'b']);
  });

  it('is right when a later chunk brings earlier events of another window', () => {
    const t = new Timeline(0, 10_000);
    t.add([full('a', 0), click('a', 1000), click('a', 9000)]);
    t.add([full('b', 4000), click('b', 5000)]);
    expect(t.windowAt(4500)).toBe('b');
    expect(t.windowAt(8999)).toBe('b');
    expect(t.windowAt(9000)).toBe('a');
  });

  it('widens its start and end to the events seen', () => {
    const t = new Timeline(5000, 6000);
    t.add([full('a', 4000), click('a', 7000)]);
    expect([t.start, t.end]).toEqual([4000, 7000]);
  });
});

describe('Timeline inactivity', () => {
  const timeline = () => {
    const t = new Timeline(0, 60_000);
    // Loaded at 0, first click at 10 s, active until 12 s, idle until 30 s, active 30–31 s, idle to the end.
    t.add([full('a', 0), click('a', 10_000), click('a', 11_000), click('a', 12_000), mutation('a', 20_000)]);
    t.add([click('a', 30_000), click('a', 31_000)]);
    return t;
  };

  it('finds gaps of more than 5 s between interactions, mutations do not count', () => {
    expect(timeline().inactivePeriods(Infinity)).toEqual([
      { from: 0, to: 10_000 - SKIP_BEFORE_MS },
      { from: 12_000 + SKIP_AFTER_MS, to: 30_000 - SKIP_BEFORE_MS },
      { from: 31_000 + SKIP_AFTER_MS, to: 60_000 },
    ]);
  });

  it('answers for a time inside or outside a period', () => {
    const t = timeline();
    expect(t.inactivityAt(5000, Infinity)).toEqual({ from: 0, to: 9500 });
    expect(t.inactivityAt(11_500, Infinity)).toBeNull();
    expect(t.inactivityAt(12_500, Infinity)).toBeNull();
    expect(t.inactivityAt(20_000, Infinity)).toEqual({ from: 13_000, to: 29_500 });
    expect(t.inactivityAt(29_500, Infinity)).toBeNull();
    expect(t.inactivityAt(45_000, Infinity)).toEqual({ from: 32_000, to: 60_000 });
  });

  it('ends an open stretch where the loaded events end, until more arrive', () => {
    const t = timeline();
    // Only the first 40 s have arrived: the idle stretch after 31 s is known up to 40 s.
    expect(t.inactivityAt(35_000, 40_000)).toEqual({ from: 32_000, to: 40_000 });
    expect(t.inactivityAt(35_000, 33_000)).toBeNull();
    t.add([click('a', 45_000)]);
    expect(t.inactivityAt(35_000, 50_000)).toEqual({ from: 32_000, to: 44_500 });
  });

  it('skips nothing in a recording without any interaction, and nothing short', () => {
    const quiet = new Timeline(0, 60_000);
    quiet.add([full('a', 0), mutation('a', 30_000)]);
    expect(quiet.inactivePeriods(Infinity)).toEqual([]);
    expect(quiet.inactivityAt(30_000, Infinity)).toBeNull();
    const busy = new Timeline(0, 4000);
    busy.add([full('a', 0), click('a', 1000), click('a', 4000)]);
    expect(busy.inactivePeriods(Infinity)).toEqual([]);
  });
});
