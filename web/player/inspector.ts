/**
 * The inspector beside the player: the session's events from the events API (page views, autocapture clicks,
 * custom events, exceptions: `session-events.ts`, loaded page by page) and what the recording itself holds
 * besides the page — page views, console messages and network requests (`inspector-entries.ts`) — merged in time
 * order. Once the events API has given page views, the recording's own page-view lines are left out (the same
 * navigations twice). Filter by kind and text; a click on a line moves the player there; page views, errors and
 * custom events are marked on the seek bar; the line of the current time is highlighted and, while "Follow
 * playback" is on, kept in view.
 *
 * Bounded however long the recording: at most INSPECTOR_MAX_ENTRIES lines are kept, from both sources together
 * (the inspector says when it stops listing), events are read EVENTS_PAGE_SIZE at a time, INSPECTOR_PAGE_SIZE
 * lines are drawn at a time (paged), and markers that fall on the same spot of the bar are drawn once.
 */
import './inspector.css';
import { h, replaceChildren } from '../lib/dom.js';
import { formatClock } from '../lib/format.js';
import {
  currentIndex,
  type EntryKind,
  entriesOf,
  filterEntries,
  type InspectorEntry,
  mergeEntries,
} from '../lib/inspector-entries.js';
import {
  entryOfEvent,
  type EventsPage,
  loadSessionEvents,
  type SessionEvent,
} from '../lib/session-events.js';
import type { WindowEvent } from '../lib/snapshot-lines.js';

export const INSPECTOR_MAX_ENTRIES = 10_000;
export const INSPECTOR_PAGE_SIZE = 100;
/** Events asked of the API per request. */
export const EVENTS_PAGE_SIZE = 200;
/** Markers are placed to the nearest 1/MARKER_SLOTS of the bar, one per slot and kind. */
const MARKER_SLOTS = 500;
const FOLLOW_EVERY_MS = 250;

/** What the inspector needs of the player. */
export interface InspectedPlayer {
  readonly element: HTMLElement;
  readonly range: { start: number; end: number };
  readonly currentTime: number;
  seekTo(t: number): void;
}

/** The kinds of lines, in the order of the filter. */
const KINDS: { kind: EntryKind; label: string }[] = [
  { kind: 'page', label: 'Page views' },
  { kind: 'click', label: 'Clicks' },
  { kind: 'event', label: 'Events' },
  { kind: 'exception', label: 'Exceptions' },
  { kind: 'console', label: 'Console' },
  { kind: 'network', label: 'Network' },
];

/** Reads one page of the session's events (offset, limit). */
export type EventsPageReader = (offset: number, limit: number, signal: AbortSignal) => Promise<EventsPage>;

export class Inspector {
  readonly element: HTMLElement;
  private readonly entries: InspectorEntry[] = [];
  private shown: InspectorEntry[] = [];
  private dropped = 0;
  private page = 0;
  private current = -1;
  private readonly kinds = new Set<EntryKind>(KINDS.map((k) => k.kind));
  private text = '';
  private readonly list = h('ol', { class: 'inspector-list' });
  private readonly summary = h('p', { class: 'inspector-summary', role: 'status' });
  private readonly pager = h('div', { class: 'inspector-pager' });
  private readonly follow = h('input', { type: 'checkbox', class: 'inspector-follow', checked: true });
  private readonly markers = h('div', { class: 'player-markers', 'aria-hidden': 'true' });
  private readonly eventsStatus = h('p', { class: 'inspector-events-status', role: 'status', hidden: true });
  private timer: ReturnType<typeof setInterval> | null = null;
  private dirty = false;
  /** The uuids of the events listed (a page read twice while the session grows adds nothing). */
  private readonly eventIds = new Set<string>();
  /** The events API has given page views: the recording's own page-view lines are left out. */
  private eventPageViews = false;
  private readonly abort = new AbortController();

  constructor(private readonly player: InspectedPlayer) {
    const search = h('input', {
      type: 'search',
      class: 'inspector-search',
      placeholder: 'Filter lines',
      'aria-label': 'Filter the inspector’s lines by text',
    });
    search.addEventListener('input', () => {
      this.text = search.value;
      this.refilter();
    });
    const kindBoxes = KINDS.map(({ kind, label }) => {
      const box = h('input', { type: 'checkbox', class: `inspector-kind`, 'data-kind': kind, checked: true });
      box.addEventListener('change', () => {
        if (box.checked) this.kinds.add(kind);
        else this.kinds.delete(kind);
        this.refilter();
      });
      return h('label', { class: 'inspector-kind-label' }, box, ` ${label}`);
    });
    this.element = h(
      'section',
      { class: 'inspector', 'aria-label': 'Inspector' },
      h('h3', { class: 'inspector-title' }, 'Inspector'),
      h(
        'div',
        { class: 'inspector-filters' },
        ...kindBoxes,
        search,
        h('label', { class: 'inspector-follow-label' }, this.follow, ' Follow playback'),
      ),
      this.summary,
      this.eventsStatus,
      this.list,
      this.pager,
    );
    this.player.element.querySelector('.player-timeline')?.appendChild(this.markers);
    this.timer = setInterval(() => this.tick(), FOLLOW_EVERY_MS);
    this.render();
  }

  /** Reads a batch of the recording's events as the player receives them. */
  add(events: readonly WindowEvent[]): void {
    const added: InspectorEntry[] = [];
    for (const { event } of events) {
      for (const entry of entriesOf(event)) {
        if (this.entries.length + added.length >= INSPECTOR_MAX_ENTRIES) this.dropped++;
        else added.push(entry);
      }
    }
    if (!added.length && !this.dropped) return;
    mergeEntries(this.entries, added);
    this.dirty = true;
  }

  /** Adds the session's events (from the events API), each once. */
  addEvents(events: readonly SessionEvent[]): void {
    const added: InspectorEntry[] = [];
    for (const event of events) {
      if (this.eventIds.has(event.uuid)) continue;
      const entry = entryOfEvent(event);
      if (!entry) continue;
      if (this.entries.length + added.length >= INSPECTOR_MAX_ENTRIES) {
        this.dropped++;
        continue;
      }
      this.eventIds.add(event.uuid);
      if (entry.kind === 'page' && entry.marker === 'page') this.eventPageViews = true;
      added.push(entry);
    }
    mergeEntries(this.entries, added);
    this.dirty = true;
  }

  /**
   * Reads the session's events page by page (`read`) into the inspector, up to INSPECTOR_MAX_ENTRIES; says so
   * when they cannot be read (`data-events` on the inspector: loading, loaded, error).
   */
  async loadEvents(read: EventsPageReader, describeError: (error: Error) => string): Promise<void> {
    const signal = this.abort.signal;
    this.element.dataset.events = 'loading';
    this.setEventsStatus('Loading the session’s events…');
    try {
      const { more } = await loadSessionEvents({
        fetchPage: (offset, limit) => read(offset, limit, signal),
        pageSize: EVENTS_PAGE_SIZE,
        max: INSPECTOR_MAX_ENTRIES,
        onPage: (events) => this.addEvents(events),
        signal,
      });
      if (signal.aborted) return;
      this.element.dataset.events = 'loaded';
      this.setEventsStatus(
        more ? `Only the first ${INSPECTOR_MAX_ENTRIES} of the session’s events are listed.` : '',
      );
    } catch (error) {
      if (signal.aborted || (error as Error).name === 'AbortError') return;
      this.element.dataset.events = 'error';
      this.setEventsStatus(describeError(error as Error));
    }
  }

  /** Says why the session's events are not listed (`data-events="none"`). */
  showEventsNote(text: string): void {
    this.element.dataset.events = 'none';
    this.setEventsStatus(text);
  }

  private setEventsStatus(text: string): void {
    this.eventsStatus.textContent = text;
    this.eventsStatus.hidden = !text;
  }

  destroy(): void {
    this.abort.abort();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.markers.remove();
    this.element.remove();
  }

  /** The lines listed: the recording's page views give way to the events API's. */
  private listed(): InspectorEntry[] {
    const all = filterEntries(this.entries, this.kinds, this.text);
    return this.eventPageViews ? all.filter((e) => e.kind !== 'page' || e.source === 'events') : all;
  }

  private refilter(): void {
    this.shown = this.listed();
    this.current = -2; // redraw the highlight
    this.page = 0;
    this.render();
  }

  private tick(): void {
    if (!this.element.isConnected) return this.destroy();
    if (this.dirty) {
      this.dirty = false;
      this.shown = this.listed();
      this.renderMarkers();
      this.render();
    }
    const index = currentIndex(this.shown, this.player.currentTime);
    if (index === this.current) return;
    this.current = index;
    if (this.follow.checked && index >= 0) {
      const page = Math.floor(index / INSPECTOR_PAGE_SIZE);
      if (page !== this.page) {
        this.page = page;
        return this.render();
      }
    }
    this.highlight();
  }

  private render(): void {
    const pages = Math.max(1, Math.ceil(this.shown.length / INSPECTOR_PAGE_SIZE));
    this.page = Math.min(this.page, pages - 1);
    const from = this.page * INSPECTOR_PAGE_SIZE;
    const start = this.player.range.start;
    replaceChildren(
      this.list,
      ...this.shown.slice(from, from + INSPECTOR_PAGE_SIZE).map((entry, i) => {
        const line = h(
          'button',
          {
            type: 'button',
            class: 'inspector-line',
            'data-kind': entry.kind,
            'data-index': from + i,
            'data-source': entry.source ?? 'recording',
            'data-offset': Math.round(entry.timestamp - start),
            title: entry.text,
          },
          h('span', { class: 'inspector-time' }, formatClock(Math.max(0, entry.timestamp - start))),
          h('span', { class: `inspector-label inspector-label-${entry.marker ?? 'plain'}` }, entry.label),
          h('span', { class: 'inspector-text' }, entry.text),
        );
        line.addEventListener('click', () => {
          this.follow.checked = false;
          this.player.seekTo(entry.timestamp);
        });
        return h('li', {}, line);
      }),
    );
    // The recording's page views left out for the events API's are not counted either.
    const total = this.eventPageViews
      ? this.entries.filter((e) => e.kind !== 'page' || e.source === 'events').length
      : this.entries.length;
    this.summary.textContent =
      (total === 0
        ? 'Nothing recorded besides the page so far: page views, clicks, events, exceptions, console messages and network requests show here.'
        : `${this.shown.length} of ${total} lines`) +
      (this.dropped
        ? `; only the first ${INSPECTOR_MAX_ENTRIES} lines are listed (${this.dropped} more).`
        : '');
    const previous = h('button', { type: 'button', disabled: this.page === 0 }, 'Earlier');
    const next = h('button', { type: 'button', disabled: this.page >= pages - 1 }, 'Later');
    previous.addEventListener('click', () => this.turn(-1));
    next.addEventListener('click', () => this.turn(1));
    replaceChildren(this.pager, previous, h('span', {}, `Page ${this.page + 1} of ${pages}`), next);
    this.current = -2;
    this.highlight();
  }

  private turn(by: number): void {
    this.follow.checked = false;
    this.page += by;
    this.render();
  }

  private highlight(): void {
    const index = currentIndex(this.shown, this.player.currentTime);
    this.current = index;
    for (const line of this.list.querySelectorAll<HTMLElement>('.inspector-current')) {
      line.classList.remove('inspector-current');
      line.removeAttribute('aria-current');
    }
    const line = this.list.querySelector<HTMLElement>(`[data-index="${index}"]`);
    if (!line) return;
    line.classList.add('inspector-current');
    line.setAttribute('aria-current', 'true');
    if (this.follow.checked) this.keepInView(line);
  }

  /**
   * Scrolls the list (and nothing around it, unlike scrollIntoView: the page, or the panel the player sits in)
   * so that `line` is in view.
   */
  private keepInView(line: HTMLElement): void {
    const shown = line.getBoundingClientRect();
    const list = this.list.getBoundingClientRect();
    if (shown.top < list.top) this.list.scrollTop -= list.top - shown.top;
    else if (shown.bottom > list.bottom) this.list.scrollTop += shown.bottom - list.bottom;
  }

  private renderMarkers(): void {
    const { start, end } = this.player.range;
    const span = Math.max(1, end - start);
    const slots = new Map<string, { slot: number; kind: 'page' | 'error' | 'event'; text: string }>();
    for (const entry of this.entries) {
      if (!entry.marker) continue;
      if (this.eventPageViews && entry.kind === 'page' && entry.source !== 'events') continue;
      const slot = Math.round((Math.min(Math.max(entry.timestamp - start, 0), span) / span) * MARKER_SLOTS);
      const key = `${entry.marker}:${slot}`;
      if (!slots.has(key)) slots.set(key, { slot, kind: entry.marker, text: entry.text });
    }
    replaceChildren(
      this.markers,
      ...[...slots.values()].map(({ slot, kind, text }) => {
        const marker = h('span', { class: `player-marker player-marker-${kind}`, title: text });
        marker.style.left = `${((slot / MARKER_SLOTS) * 100).toFixed(2)}%`;
        return marker;
      }),
    );
  }
}
