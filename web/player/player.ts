/**
 * The recording player: rrweb's replayer for the pictures, this module for everything around them.
 *
 * - Events arrive chunk by chunk (`loadSnapshots`); playback starts as soon as the first window can be drawn and
 *   never runs past what has arrived (it waits, "buffering", and goes on when more arrives).
 * - One rrweb replayer per browser window (tab) of the recording, each fed only its own window's events; the
 *   player shows the window the user was in at the current time (`Timeline.windowAt`) and keeps the clock.
 * - Controls: play/pause, a time line (with the inactive stretches and how much has loaded), speed 1×–8×,
 *   skipping inactivity, and the keyboard: space plays or pauses, ← and → go 5 s back or forward (15 s with
 *   Shift), Home and End go to the start and the end.
 *
 * The state is mirrored on the root element for tests and styling: `data-state` (loading, playing, paused,
 * buffering, ended, error, empty) and `data-time` (milliseconds since the recording's start).
 *
 * Long on purpose (about 650 lines): it is one state machine — the clock, the replayer of each window, buffering
 * and the controls read and change the same state in every animation frame (`tick`), and each control's handler
 * must leave the clock, the shown window and the `data-state` consistent. What stands apart already lives in
 * web/lib/ (loading, the timeline, the window lines, formatting) and the inspector in ./inspector.ts; splitting
 * the rest would pass that state between files without making any part readable alone.
 */
import { type eventWithTime, Replayer } from 'rrweb';
import { append, h, replaceChildren } from '../lib/dom.js';
import { formatClock, formatDuration, isWebUrl } from '../lib/format.js';
import { LoadError, type LoadBatch, loadSnapshots } from '../lib/snapshot-loader.js';
import type { WindowEvent } from '../lib/snapshot-lines.js';
import { Timeline } from '../lib/timeline.js';
import { EventType } from '../lib/unpack.js';

/** What the player shows about a recording (never anything about its person). */
export interface RecordingInfo {
  start_time: string;
  end_time: string;
  recording_duration: number;
  start_url: string | null;
}

export interface PlayerOptions {
  info: RecordingInfo;
  /** The recording's snapshot endpoint. */
  snapshotsUrl: string;
  /** Request headers for the snapshot endpoint (the API key in the recordings browser). */
  headers?: Record<string, string>;
  /** With the facts of the recording above the picture (the share page), or the picture and controls only. */
  chrome: boolean;
  /** Where the keyboard shortcuts listen (default: the player itself). */
  keyboardTarget?: HTMLElement | Document;
  autoplay?: boolean;
  /** Called once playback first starts. */
  onFirstPlay?: () => void;
  /** Called with each batch of events as it arrives, in the order loaded (the inspector reads them). */
  onEvents?: (events: readonly WindowEvent[]) => void;
}

export const SPEEDS = [1, 2, 3, 4, 8] as const;
const SEEK_STEP_MS = 5000;
const SEEK_STEP_LARGE_MS = 15_000;
/** How far the replayer's own clock may drift from the player's before it is set again. */
const MAX_DRIFT_MS = 400;

type State = 'loading' | 'playing' | 'paused' | 'buffering' | 'ended' | 'error' | 'empty';

interface WindowView {
  id: string;
  root: HTMLDivElement;
  pending: eventWithTime[];
  replayer: Replayer | null;
  width: number;
  height: number;
  /** The replayer reached its last event (it pauses itself then). */
  finished: boolean;
}

const isTypingTarget = (target: EventTarget | null): boolean => {
  if (!(target instanceof HTMLElement)) return false;
  if (
    target.isContentEditable ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement
  )
    return true;
  return target instanceof HTMLInputElement && target.type !== 'range' && target.type !== 'checkbox';
};

export class Player {
  readonly element: HTMLElement;
  private readonly options: PlayerOptions;
  private readonly timeline: Timeline;
  private readonly windows = new Map<string, WindowView>();
  private active: WindowView | null = null;
  private state: State = 'loading';
  /** The current time (epoch milliseconds). */
  private time: number;
  private knownUntil = -Infinity;
  private speed = 1;
  private skipInactive = true;
  private wantsToPlay: boolean;
  private started = false;
  private frame = 0;
  private lastFrameAt = 0;
  private lastDriftCheck = 0;
  private unreadable = 0;
  private readonly abort = new AbortController();
  private resizeObserver: ResizeObserver | null = null;
  /** The time line's thumb is held by the pointer: its value is the user's, not the clock's. */
  private dragging = false;
  /** The header's duration (chrome only): the time line's length, as the clock shows it. */
  private durationLabel: HTMLElement | null = null;

  private readonly stage: HTMLDivElement;
  private readonly status: HTMLDivElement;
  private readonly playButton: HTMLButtonElement;
  private readonly seek: HTMLInputElement;
  private readonly clock: HTMLSpanElement;
  private readonly track: HTMLDivElement;
  private readonly loadedBar: HTMLDivElement;
  private readonly windowLabel: HTMLSpanElement;
  private readonly notice: HTMLParagraphElement;

  constructor(options: PlayerOptions) {
    this.options = options;
    const start = Date.parse(options.info.start_time);
    const end = Date.parse(options.info.end_time);
    this.timeline = new Timeline(start, Number.isNaN(end) ? start : end);
    this.time = start;
    this.wantsToPlay = options.autoplay ?? true;

    this.status = h('div', { class: 'player-status', role: 'status', 'aria-live': 'polite' }, 'Loading…');
    this.stage = h('div', { class: 'player-stage' }, this.status);
    this.playButton = h('button', { type: 'button', class: 'player-play', 'aria-label': 'Play' });
    this.clock = h('span', { class: 'player-clock', 'aria-hidden': 'true' });
    this.seek = h('input', {
      type: 'range',
      class: 'player-seek',
      min: 0,
      max: 0,
      step: 100,
      value: 0,
      'aria-label': 'Time line',
    });
    this.loadedBar = h('div', { class: 'player-loaded' });
    this.track = h('div', { class: 'player-track', 'aria-hidden': 'true' }, this.loadedBar);
    const speed = h(
      'select',
      { class: 'player-speed', 'aria-label': 'Playback speed' },
      ...SPEEDS.map((s) => h('option', { value: s, selected: s === 1 }, `${s}×`)),
    );
    const skip = h('input', { type: 'checkbox', class: 'player-skip', checked: true });
    this.windowLabel = h('span', { class: 'player-window', hidden: true });
    this.notice = h('p', { class: 'player-notice', hidden: true });

    const controls = h(
      'div',
      { class: 'player-controls', role: 'group', 'aria-label': 'Playback' },
      this.playButton,
      this.clock,
      h('div', { class: 'player-timeline' }, this.track, this.seek),
      h('label', { class: 'player-speed-label' }, 'Speed ', speed),
      h('label', { class: 'player-skip-label' }, skip, ' Skip inactivity'),
      this.windowLabel,
    );
    this.element = h(
      'section',
      {
        class: `player ${options.chrome ? 'player-with-chrome' : 'player-bare'}`,
        'aria-label': 'Recording player',
      },
      options.chrome ? this.header() : null,
      this.stage,
      controls,
      this.notice,
    );

    this.playButton.addEventListener('click', () => this.toggle());
    this.seek.addEventListener('input', () => this.seekTo(this.timeline.start + Number(this.seek.value)));
    this.seek.addEventListener('pointerdown', () => (this.dragging = true));
    for (const type of ['pointerup', 'pointercancel', 'blur'] as const) {
      this.seek.addEventListener(type, () => (this.dragging = false));
    }
    speed.addEventListener('change', () => this.setSpeed(Number(speed.value)));
    skip.addEventListener('change', () => {
      this.skipInactive = skip.checked;
    });
    (options.keyboardTarget ?? this.element).addEventListener('keydown', (e) =>
      this.onKey(e as KeyboardEvent),
    );
    this.render();
  }

  /** Starts loading (and playing, unless autoplay is off). The promise settles once everything has arrived. */
  async load(): Promise<void> {
    this.resizeObserver = new ResizeObserver(() => this.fitAll());
    this.resizeObserver.observe(this.stage);
    this.frame = requestAnimationFrame(this.tick);
    try {
      const result = await loadSnapshots({
        url: this.options.snapshotsUrl,
        headers: this.options.headers,
        signal: this.abort.signal,
        onSources: (sources) => {
          // The sources' times bound the recording even before their events arrive.
          for (const s of sources) {
            const from = Date.parse(s.start_timestamp);
            const to = Date.parse(s.end_timestamp);
            if (!Number.isNaN(from)) this.timeline.start = Math.min(this.timeline.start, from);
            if (!Number.isNaN(to)) this.timeline.end = Math.max(this.timeline.end, to);
          }
        },
        onBatch: (batch) => this.receive(batch),
      });
      this.unreadable = result.unreadable;
      if (result.events === 0) this.setState('empty');
      const skipped = result.skippedSources;
      if (this.unreadable || skipped) {
        this.notice.hidden = false;
        this.notice.textContent =
          `${this.unreadable ? `${this.unreadable} event(s) could not be read and were left out. ` : ''}` +
          `${skipped ? `${skipped} source(s) of an unknown kind were skipped.` : ''}`.trim();
      }
    } catch (error) {
      if ((error as Error).name === 'AbortError') return;
      this.fail(
        error instanceof LoadError
          ? `The recording could not be loaded: ${error.message}`
          : `The recording could not be loaded (${(error as Error).message}).`,
      );
    }
  }

  destroy(): void {
    this.abort.abort();
    cancelAnimationFrame(this.frame);
    this.resizeObserver?.disconnect();
    for (const view of this.windows.values()) view.replayer?.destroy();
    this.windows.clear();
    this.element.remove();
  }

  play(): void {
    if (this.state === 'error' || this.state === 'empty') return;
    if (this.state === 'ended') this.time = this.timeline.start;
    this.wantsToPlay = true;
    this.lastFrameAt = performance.now();
    if (!this.canPlayAt(this.time)) {
      this.setState(this.started ? 'buffering' : 'loading');
      this.active?.replayer?.pause();
      this.render();
      return;
    }
    this.setState('playing');
    if (!this.started) {
      this.started = true;
      this.options.onFirstPlay?.();
    }
    this.show(this.time, true);
    this.render();
  }

  pause(): void {
    this.wantsToPlay = false;
    if (this.state === 'error' || this.state === 'empty') return;
    this.setState(this.time >= this.timeline.end && this.knownUntil === Infinity ? 'ended' : 'paused');
    this.active?.replayer?.pause();
    // The button and clock follow at once (the frame loop only redraws while playing).
    this.render();
  }

  toggle(): void {
    if (
      this.state === 'playing' ||
      this.state === 'buffering' ||
      (this.state === 'loading' && this.wantsToPlay)
    ) {
      this.pause();
    } else {
      this.play();
    }
  }

  seekTo(t: number): void {
    if (this.state === 'error' || this.state === 'empty') return;
    this.time = Math.min(Math.max(t, this.timeline.start), this.timeline.end);
    if (this.knownUntil === Infinity && this.time >= this.timeline.end) {
      this.wantsToPlay = false;
      this.show(this.time, false);
      this.setState('ended');
    } else {
      if (this.state === 'ended') this.setState('paused');
      if (this.wantsToPlay) this.play();
      else this.show(this.time, false);
    }
    this.render();
  }

  /** The recording's time range as known so far, and the time shown (epoch milliseconds). */
  get range(): { start: number; end: number } {
    return { start: this.timeline.start, end: this.timeline.end };
  }

  get currentTime(): number {
    return this.time;
  }

  setSpeed(speed: number): void {
    this.speed = speed;
    for (const view of this.windows.values()) view.replayer?.setConfig({ speed });
  }

  // ---- loading --------------------------------------------------------------------------------------------

  private receive(batch: LoadBatch): void {
    this.timeline.add(batch.events);
    this.options.onEvents?.(batch.events);
    const byWindow = new Map<string, eventWithTime[]>();
    for (const { windowId, event } of batch.events as WindowEvent[]) {
      let list = byWindow.get(windowId);
      if (!list) byWindow.set(windowId, (list = []));
      list.push(event as unknown as eventWithTime);
    }
    for (const [id, events] of byWindow) this.addToWindow(id, events);
    const shownComplete = this.time < this.knownUntil;
    this.knownUntil = Math.max(this.knownUntil, batch.knownUntil);
    this.renderWindowLabel();
    this.renderTrack();
    if (this.wantsToPlay) {
      // Start, or go on after waiting, once there is something to play.
      if ((this.state === 'loading' || this.state === 'buffering') && this.canPlayAt(this.time)) this.play();
    } else if (this.state === 'loading' || this.state === 'paused' || this.state === 'ended') {
      // Paused: draw the current time once (again, if it was drawn before all its events had arrived).
      if (this.viewAt(this.time) && (!this.active || !shownComplete)) {
        if (this.state === 'loading') this.setState('paused');
        this.show(this.time, false);
      }
    }
    this.render();
  }

  private addToWindow(id: string, events: eventWithTime[]): void {
    let view = this.windows.get(id);
    if (!view) {
      const root = h('div', { class: 'player-window-view', 'data-window': id, hidden: true });
      this.stage.appendChild(root);
      view = { id, root, pending: [], replayer: null, width: 0, height: 0, finished: false };
      this.windows.set(id, view);
    }
    if (view.replayer) {
      for (const event of events) view.replayer.addEvent(event);
      if (view.finished) {
        // It had played all it had and paused itself; go on from the current time with the new events.
        view.finished = false;
        if (view === this.active && this.state === 'playing') this.show(this.time, true);
      }
      return;
    }
    view.pending.push(...events);
    // rrweb needs two events to start, and there is nothing to draw before a full snapshot.
    if (view.pending.length >= 2 && view.pending.some((e) => e.type === EventType.FullSnapshot)) {
      this.createReplayer(view);
    }
  }

  private createReplayer(view: WindowView): void {
    const events = view.pending.sort((a, b) => a.timestamp - b.timestamp);
    view.pending = [];
    const quiet = { log: () => undefined, warn: () => undefined };
    const replayer = new Replayer(events, {
      root: view.root,
      speed: this.speed,
      skipInactive: false,
      showWarning: false,
      showDebug: false,
      triggerFocus: false,
      mouseTail: { strokeStyle: 'rgba(245, 78, 0, 0.6)', lineWidth: 2 },
      UNSAFE_replayCanvas: false,
      logger: quiet,
    });
    replayer.on('resize', (dimension) => {
      const { width, height } = dimension as { width: number; height: number };
      view.width = width;
      view.height = height;
      this.fit(view);
    });
    replayer.on('finish', () => {
      view.finished = true;
    });
    view.replayer = replayer;
    view.finished = false;
  }

  // ---- playback -------------------------------------------------------------------------------------------

  /** Whether the player has what it needs to show time t: the events up to it, and a window to draw. */
  private canPlayAt(t: number): boolean {
    if (this.knownUntil !== Infinity && t >= this.knownUntil) return false;
    return this.viewAt(t) !== null;
  }

  /**
   * The window to show at time t: the one the user was in, or, while that one cannot be drawn (no full snapshot
   * of it has arrived), the one shown now, else the first that can be drawn.
   */
  private viewAt(t: number): WindowView | null {
    const id = this.timeline.windowAt(t);
    const view = id === undefined ? undefined : this.windows.get(id);
    if (view?.replayer) return view;
    if (this.active?.replayer) return this.active;
    for (const candidate of this.windows.values()) if (candidate.replayer) return candidate;
    return null;
  }

  /** Shows time t in the window the user was in then; `playing` lets the replayer run on from there. */
  private show(t: number, playing: boolean): void {
    const view = this.viewAt(t);
    if (!view?.replayer) return;
    if (view !== this.active) {
      if (this.active) {
        this.active.replayer?.pause();
        this.active.root.hidden = true;
      }
      this.active = view;
      view.root.hidden = false;
      this.fit(view);
      this.renderWindowLabel();
    }
    const offset = Math.max(0, t - view.replayer.getMetaData().startTime);
    if (playing) view.replayer.play(offset);
    else view.replayer.pause(offset);
    this.lastDriftCheck = performance.now();
  }

  private tick = (now: number): void => {
    this.frame = requestAnimationFrame(this.tick);
    if (this.state !== 'playing') {
      this.lastFrameAt = now;
      return;
    }
    let t = this.time + (now - this.lastFrameAt) * this.speed;
    this.lastFrameAt = now;
    if (this.knownUntil === Infinity && t >= this.timeline.end) {
      this.time = this.timeline.end;
      this.wantsToPlay = false;
      this.active?.replayer?.pause();
      this.setState('ended');
      this.render();
      return;
    }
    if (t >= this.knownUntil) {
      // Everything before knownUntil has arrived, nothing after it: wait there.
      this.time = Math.max(this.time, this.knownUntil);
      this.active?.replayer?.pause();
      this.setState('buffering');
      this.render();
      return;
    }
    let jumped = false;
    if (this.skipInactive) {
      const period = this.timeline.inactivityAt(t, this.knownUntil);
      if (period) {
        t = period.to;
        jumped = true;
      }
    }
    const windowChanged = this.viewAt(t) !== this.active;
    this.time = t;
    if (jumped || windowChanged) {
      if (this.canPlayAt(t)) this.show(t, true);
    } else if (now - this.lastDriftCheck > 1000) {
      this.lastDriftCheck = now;
      const replayer = this.active?.replayer;
      if (replayer && !this.active?.finished) {
        const replayerTime = replayer.getMetaData().startTime + replayer.getCurrentTime();
        if (Math.abs(replayerTime - t) > MAX_DRIFT_MS * this.speed) this.show(t, true);
      }
    }
    this.render();
  };

  // ---- presentation ---------------------------------------------------------------------------------------

  private header(): HTMLElement {
    const { info } = this.options;
    const started = new Date(info.start_time);
    const url = info.start_url;
    return h(
      'header',
      { class: 'player-header' },
      h(
        'dl',
        { class: 'player-facts' },
        h(
          'div',
          {},
          h('dt', {}, 'Start URL'),
          h(
            'dd',
            { class: 'player-start-url' },
            isWebUrl(url)
              ? h('a', { href: url, rel: 'noopener noreferrer nofollow', target: '_blank' }, url)
              : url || '—',
          ),
        ),
        h(
          'div',
          {},
          h('dt', {}, 'Started'),
          h(
            'dd',
            {},
            Number.isNaN(started.getTime())
              ? '—'
              : h(
                  'time',
                  { datetime: started.toISOString(), class: 'player-start-time' },
                  started.toLocaleString(),
                ),
          ),
        ),
        h(
          'div',
          {},
          h('dt', {}, 'Duration'),
          (this.durationLabel = h(
            'dd',
            { class: 'player-duration' },
            formatClock(info.recording_duration * 1000),
          )),
        ),
      ),
    );
  }

  private setState(state: State): void {
    if (this.state === state) return;
    this.state = state;
    this.element.dataset.state = state;
    const messages: Partial<Record<State, string>> = {
      loading: 'Loading…',
      buffering: 'Loading more of the recording…',
      empty: 'This recording has no snapshots to show.',
    };
    const message = messages[state];
    if (message) this.status.textContent = message;
    if (state !== 'error') this.status.hidden = !message;
    this.status.classList.toggle('player-status-overlay', state === 'loading' || state === 'buffering');
  }

  private fail(message: string): void {
    this.setState('error');
    this.wantsToPlay = false;
    this.status.hidden = false;
    this.status.textContent = message;
    this.status.setAttribute('role', 'alert');
    this.render();
  }

  private render(): void {
    const elapsed = this.time - this.timeline.start;
    const duration = this.timeline.end - this.timeline.start;
    this.element.dataset.time = String(Math.round(elapsed));
    const playing =
      this.state === 'playing' ||
      this.state === 'buffering' ||
      (this.state === 'loading' && this.wantsToPlay);
    this.playButton.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    this.playButton.textContent = playing ? '❚❚' : '▶';
    this.playButton.disabled = this.state === 'error' || this.state === 'empty';
    const clock = `${formatClock(elapsed)} / ${formatClock(duration)}`;
    if (this.clock.textContent !== clock) this.clock.textContent = clock;
    // The header names the same length as the clock: the time line's, which grows past the recording's
    // stated duration when its events reach further.
    const length = formatClock(duration);
    if (this.durationLabel && this.durationLabel.textContent !== length) {
      this.durationLabel.textContent = length;
      this.durationLabel.title = formatDuration(duration / 1000);
    }
    this.seek.max = String(Math.max(0, Math.round(duration)));
    if (!this.dragging) this.seek.value = String(Math.round(elapsed));
    this.seek.setAttribute('aria-valuetext', `${formatClock(elapsed)} of ${formatClock(duration)}`);
  }

  /** Which of the recording's windows (tabs) is shown, once there is more than one. */
  private renderWindowLabel(): void {
    this.windowLabel.hidden = this.windows.size < 2;
    if (!this.active) return;
    const index = [...this.windows.keys()].indexOf(this.active.id) + 1;
    this.windowLabel.textContent = `Window ${index} of ${this.windows.size}`;
  }

  /** The loaded part and the inactive stretches, drawn under the time line. */
  private renderTrack(): void {
    const duration = Math.max(1, this.timeline.end - this.timeline.start);
    const share = (t: number) =>
      `${(Math.min(Math.max((t - this.timeline.start) / duration, 0), 1) * 100).toFixed(3)}%`;
    this.loadedBar.style.width = this.knownUntil === Infinity ? '100%' : share(this.knownUntil);
    const periods = this.timeline.inactivePeriods(this.knownUntil);
    replaceChildren(this.track, this.loadedBar);
    for (const p of periods) {
      const bar = h('div', { class: 'player-inactive' });
      bar.style.left = share(p.from);
      bar.style.width = `calc(${share(p.to)} - ${share(p.from)})`;
      append(this.track, bar);
    }
  }

  private fitAll(): void {
    for (const view of this.windows.values()) this.fit(view);
  }

  /** Scales the recorded viewport to fit the stage, centred. */
  private fit(view: WindowView): void {
    const wrapper = view.replayer?.wrapper;
    if (!wrapper || !view.width || !view.height) return;
    const box = this.stage.getBoundingClientRect();
    if (!box.width || !box.height) return;
    const scale = Math.min(box.width / view.width, box.height / view.height, 1);
    wrapper.style.transform = `scale(${scale})`;
    wrapper.style.left = `${(box.width - view.width * scale) / 2}px`;
    wrapper.style.top = `${(box.height - view.height * scale) / 2}px`;
  }

  private onKey(e: KeyboardEvent): void {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || isTypingTarget(e.target)) return;
    const onControl =
      e.target instanceof HTMLButtonElement ||
      (e.target instanceof HTMLInputElement && e.target.type === 'checkbox');
    const step = e.shiftKey ? SEEK_STEP_LARGE_MS : SEEK_STEP_MS;
    switch (e.key) {
      case ' ':
      case 'Spacebar':
        // A focused button or checkbox answers the space bar itself.
        if (onControl) return;
        this.toggle();
        break;
      case 'k':
        this.toggle();
        break;
      case 'ArrowLeft':
        this.seekTo(this.time - step);
        break;
      case 'ArrowRight':
        this.seekTo(this.time + step);
        break;
      case 'Home':
        this.seekTo(this.timeline.start);
        break;
      case 'End':
        this.seekTo(this.timeline.end);
        break;
      default:
        return;
    }
    e.preventDefault();
  }
}
