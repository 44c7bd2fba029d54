import { describe, expect, it } from '@jest/globals';
import {
  clickedElement,
  entryOfEvent,
  exceptionMessage,
  fromApiEvent,
  fromSharedEvent,
  loadSessionEvents,
  type SessionEvent,
} from './session-events.js';

const event = (over: Partial<SessionEvent>): SessionEvent => ({
  uuid: 'u1',
  event: 'x',
  timestamp: 1000,
  current_url: null,
  event_type: null,
  element_tag: null,
  element_text: null,
  exception_message: null,
  ...over,
});

describe('clickedElement', () => {
  it("reads the clicked element's tag and the innermost text, quotes unescaped", () => {
    expect(
      clickedElement('svg.i:nth-child="1";button.buy:attr__id="b"text="Say \\"hi\\"; now";body'),
    ).toEqual({
      tag: 'svg',
      text: 'Say "hi"; now',
    });
    expect(clickedElement('div:attr__data-text="no"')).toEqual({ tag: 'div', text: null });
    expect(clickedElement('')).toBeNull();
  });
});

describe('exceptionMessage', () => {
  it('reads $exception_list first, then $exception_message', () => {
    expect(exceptionMessage({ $exception_list: [{ type: 'Error', value: 'boom' }] })).toBe('Error: boom');
    expect(exceptionMessage({ $exception_message: 'old' })).toBe('old');
    expect(exceptionMessage({})).toBeNull();
  });
});

describe('fromApiEvent and fromSharedEvent', () => {
  it('keep only what the inspector shows', () => {
    const full = fromApiEvent({
      uuid: 'a',
      event: '$autocapture',
      timestamp: '2026-11-20T10:00:01.500Z',
      properties: { $current_url: 'https://shop.example/', $event_type: 'click', email: 'p@x.y' },
      elements_chain: 'button:text="Buy"',
    });
    expect(full).toEqual({
      uuid: 'a',
      event: '$autocapture',
      timestamp: Date.parse('2026-11-20T10:00:01.500Z'),
      current_url: 'https://shop.example/',
      event_type: 'click',
      element_tag: 'button',
      element_text: 'Buy',
      exception_message: null,
    });
    const { timestamp, ...rest } = full;
    expect(fromSharedEvent({ ...rest, timestamp: '2026-11-20T10:00:01.500Z' })).toEqual(full);
    expect(timestamp).toBe(Date.parse('2026-11-20T10:00:01.500Z'));
  });
});

describe('the element of a rage click and a dead click', () => {
  const apiEvent = (name: string, chain: string) =>
    fromApiEvent({
      uuid: name,
      event: name,
      timestamp: '2026-11-20T10:00:01.500Z',
      properties: { $current_url: 'https://shop.example/', $event_type: 'click' },
      elements_chain: chain,
    });

  it('is read from elements_chain as for $autocapture, and named in the line', () => {
    const rage = apiEvent('$rageclick', 'button.add:attr__id="add"nth-child="1"text="Add to cart";div.row');
    expect(rage).toMatchObject({ element_tag: 'button', element_text: 'Add to cart' });
    expect(entryOfEvent(rage)).toMatchObject({
      kind: 'click',
      label: 'rageclick',
      text: 'button “Add to cart”',
    });

    const dead = apiEvent('$dead_click', 'span:nth-child="2";a:href="/ship"text="Free shipping"');
    expect(dead).toMatchObject({ element_tag: 'span', element_text: 'Free shipping' });
    expect(entryOfEvent(dead)).toMatchObject({
      kind: 'click',
      label: 'dead click',
      text: 'span “Free shipping”',
    });

    expect(entryOfEvent(apiEvent('$dead_click', 'img.logo:nth-child="1"'))).toMatchObject({ text: 'img' });
    expect(entryOfEvent(apiEvent('$rageclick', ''))).toMatchObject({ text: 'an element' });
  });

  it('is not read for other events', () => {
    expect(apiEvent('checkout started', 'button:text="Buy"')).toMatchObject({
      element_tag: null,
      element_text: null,
    });
  });
});

describe('entryOfEvent', () => {
  it('lists page views with their URL, clicks with their text, custom events by name, exceptions', () => {
    expect(entryOfEvent(event({ event: '$pageview', current_url: 'https://shop.example/' }))).toEqual({
      timestamp: 1000,
      source: 'events',
      id: 'u1',
      kind: 'page',
      label: 'page view',
      text: 'https://shop.example/',
      marker: 'page',
    });
    expect(
      entryOfEvent(
        event({ event: '$autocapture', event_type: 'click', element_tag: 'button', element_text: 'Buy' }),
      ),
    ).toMatchObject({ kind: 'click', label: 'click', text: 'button “Buy”', marker: null });
    expect(entryOfEvent(event({ event: '$autocapture', element_tag: 'img' }))).toMatchObject({
      kind: 'click',
      text: 'img',
    });
    expect(entryOfEvent(event({ event: 'checkout started' }))).toMatchObject({
      kind: 'event',
      label: 'custom event',
      text: 'checkout started',
      marker: 'event',
    });
    expect(entryOfEvent(event({ event: '$web_vitals' }))).toMatchObject({ kind: 'event', marker: null });
    expect(entryOfEvent(event({ event: '$exception', exception_message: 'Error: boom' }))).toMatchObject({
      kind: 'exception',
      text: 'Error: boom',
      marker: 'error',
    });
  });

  it('leaves out what says nothing of the page, and events without a time', () => {
    expect(entryOfEvent(event({ event: '$set' }))).toBeNull();
    expect(entryOfEvent(event({ event: 'x', timestamp: Number.NaN }))).toBeNull();
  });
});

describe('loadSessionEvents', () => {
  const all = Array.from({ length: 25 }, (_, i) => event({ uuid: `u${i}`, timestamp: i }));
  const pages = (count = all.length) => {
    const asked: [number, number][] = [];
    return {
      asked,
      fetchPage: (offset: number, limit: number) => {
        asked.push([offset, limit]);
        return Promise.resolve({ count, results: all.slice(offset, offset + limit) });
      },
    };
  };

  it('reads page by page until all are read', async () => {
    const { asked, fetchPage } = pages();
    const got: string[] = [];
    const result = await loadSessionEvents({
      fetchPage,
      pageSize: 10,
      max: 100,
      onPage: (events) => got.push(...events.map((e) => e.uuid)),
    });
    expect(asked).toEqual([
      [0, 10],
      [10, 10],
      [20, 10],
    ]);
    expect(got).toEqual(all.map((e) => e.uuid));
    expect(result).toEqual({ read: 25, more: 0 });
  });

  it('stops at max and says how many more there were', async () => {
    const { asked, fetchPage } = pages();
    const result = await loadSessionEvents({ fetchPage, pageSize: 10, max: 15, onPage: () => undefined });
    expect(asked).toEqual([
      [0, 10],
      [10, 5],
    ]);
    expect(result).toEqual({ read: 15, more: 10 });
  });

  it('stops on an empty page even when the count promised more', async () => {
    const { asked, fetchPage } = pages(1000);
    const result = await loadSessionEvents({ fetchPage, pageSize: 20, max: 10_000, onPage: () => undefined });
    expect(asked).toEqual([
      [0, 20],
      [20, 20],
      [25, 20],
    ]);
    expect(result.read).toBe(25);
  });
});
