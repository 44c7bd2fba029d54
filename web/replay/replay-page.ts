/**
 * The recordings browser (`/replay`): for people holding a personal API key. The key is typed into the page and
 * kept in `sessionStorage` only (gone when the tab closes; never in a cookie, the URL or `localStorage`). Pick an
 * organization and a project, filter and list the recordings, play one (which marks it viewed), share it.
 *
 * Scopes the key needs: none for `@me`; `project:read` (organization projects), `session_recording:read` (list,
 * play); `session_recording:write` (mark viewed) and `sharing_configuration:read`/`:write` (share) for those
 * actions only — without them the page says so and the rest works. Saved views (recording playlists) need
 * `session_recording_playlist:read`, saving one and pinning a recording `session_recording_playlist:write`. The
 * player's inspector lists the session's events with `query:read` (without it, the recording's own lines only).
 *
 * Long on purpose (about 850 lines): one page controller, `RecordingsBrowser`, whose steps (the key form, the
 * organization and project pickers, the list with its pager, the player panel, sharing) share the signed-in
 * client, the chosen project and the open recording, and hand focus to each other. The parts that stand alone are
 * already modules of their own: the API client (./api.ts), the filters (./filters.ts), the saved views
 * (./saved-views.ts), the player and the inspector (web/player/).
 */
import 'rrweb/dist/style.css';
import '../player/player.css';
import './replay.css';
import { h, replaceChildren } from '../lib/dom.js';
import { formatClock } from '../lib/format.js';
import { fromApiEvent } from '../lib/session-events.js';
import { Inspector } from '../player/inspector.js';
import { Player } from '../player/player.js';
import {
  ApiClient,
  ApiRequestError,
  type CurrentUser,
  grantsEvents,
  type Recording,
  recordingPath,
} from './api.js';
import { DATE_RANGES, type DateRange, DEFAULT_FILTERS, type FilterValues, filterQuery } from './filters.js';
import { filtersFromUrlQuery, filtersToUrlQuery } from './saved-filters.js';
import { SavedViews } from './saved-views.js';

const KEY_STORAGE = 'replay.personal_api_key';
const PAGE_SIZE = 20;
/** At most this many projects are asked whether they have recordings when looking for where to start. */
const MAX_START_PROBES = 20;
/** The open player's panel: its least height, and the room left under it at the bottom of the window (px). */
const VIEWER_MIN_HEIGHT = 420;
const VIEWER_MARGIN = 8;

class RecordingsBrowser {
  private api: ApiClient | null = null;
  private user: CurrentUser | null = null;
  private projectId: number | null = null;
  private filters: FilterValues;
  /** Filters of the page's address it cannot show (left out of the list). */
  private readonly urlIgnored: string[];
  private offset = 0;
  private player: Player | null = null;
  private rows = new Map<string, HTMLTableRowElement>();
  /** The recording open in the player, if any. */
  private openId: string | null = null;
  private views: SavedViews | null = null;
  private listRequests = 0;

  private readonly root: HTMLElement;
  private readonly status = h('p', { class: 'replay-status', role: 'status', 'aria-live': 'polite' });
  private readonly main = h('div', { class: 'replay-main' });
  /** Why the page starts on another organization or project than the key's current one. */
  private readonly note = h('p', { class: 'replay-note', role: 'status' });

  constructor(root: HTMLElement) {
    this.root = root;
    const fromUrl = filtersFromUrlQuery(new URLSearchParams(location.search));
    this.filters = fromUrl.values;
    this.urlIgnored = fromUrl.ignored;
    const forget = h('button', { type: 'button', class: 'replay-forget', hidden: true }, 'Forget key');
    forget.addEventListener('click', () => this.forgetKey());
    replaceChildren(
      root,
      h('header', { class: 'replay-header' }, h('h1', {}, 'Session recordings'), forget),
      this.status,
      this.main,
    );
    window.addEventListener('resize', () => this.fitViewer());
    const key = sessionStorage.getItem(KEY_STORAGE);
    if (key) void this.signIn(key);
    else this.showKeyForm();
  }

  // ---- key ----------------------------------------------------------------------------------------------------

  private showKeyForm(error?: string): void {
    this.root.querySelector<HTMLButtonElement>('.replay-forget')!.hidden = true;
    const input = h('input', {
      id: 'replay-key',
      name: 'key',
      type: 'password',
      autocomplete: 'off',
      spellcheck: 'false',
      required: true,
      'aria-describedby': 'replay-key-help',
    });
    const form = h(
      'form',
      { class: 'replay-key-form', 'aria-labelledby': 'replay-key-title' },
      h('h2', { id: 'replay-key-title' }, 'Sign in with a personal API key'),
      h('label', { for: 'replay-key' }, 'Personal API key'),
      input,
      h(
        'p',
        { id: 'replay-key-help', class: 'replay-help' },
        'The key stays in this browser tab only (session storage) and is sent to this service alone. ' +
          'It needs the scopes project:read and session_recording:read; session_recording:write marks recordings ' +
          'viewed, sharing_configuration:write shares them, query:read lists the session’s events in the player.',
      ),
      error ? h('p', { class: 'replay-error', role: 'alert' }, error) : null,
      h('button', { type: 'submit' }, 'Continue'),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.signIn(input.value.trim());
    });
    replaceChildren(this.main, form);
    this.setStatus('');
    input.focus();
  }

  private async signIn(key: string): Promise<void> {
    if (!key) return this.showKeyForm('Enter a key.');
    const api = new ApiClient(key);
    this.setStatus('Checking the key…');
    try {
      this.user = await api.me();
    } catch (error) {
      sessionStorage.removeItem(KEY_STORAGE);
      return this.showKeyForm(
        error instanceof ApiRequestError && error.status === 401
          ? 'This key is not valid (unknown or revoked).'
          : `The key could not be checked: ${(error as Error).message}`,
      );
    }
    sessionStorage.setItem(KEY_STORAGE, key);
    this.api = api;
    this.root.querySelector<HTMLButtonElement>('.replay-forget')!.hidden = false;
    this.showBrowser();
  }

  private forgetKey(): void {
    sessionStorage.removeItem(KEY_STORAGE);
    this.player?.destroy();
    this.player = null;
    this.openId = null;
    this.api = null;
    this.user = null;
    this.projectId = null;
    this.views = null;
    this.showKeyForm();
  }

  // ---- organization, project, filters --------------------------------------------------------------------

  private showBrowser(): void {
    const user = this.user!;
    const orgSelect = h(
      'select',
      { id: 'replay-org' },
      ...user.organizations.map((o) =>
        h('option', { value: o.id, selected: o.id === user.organization?.id }, o.name),
      ),
    );
    const projectSelect = h('select', { id: 'replay-project' });
    const scope = h(
      'form',
      { class: 'replay-scope', 'aria-label': 'Organization and project' },
      h('label', { for: 'replay-org' }, 'Organization'),
      orgSelect,
      h('label', { for: 'replay-project' }, 'Project'),
      projectSelect,
    );
    scope.addEventListener('submit', (e) => e.preventDefault());

    const table = h('table', { class: 'replay-list' });
    const pager = h('nav', { class: 'replay-pager', 'aria-label': 'Pages' });
    const viewer = h('section', {
      class: 'replay-viewer',
      'aria-labelledby': 'replay-viewer-title',
      hidden: true,
    });
    viewer.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      e.preventDefault();
      this.closePlayer(true);
    });
    // Beside an open player the filters give way to the list (replay.css), until this button shows them.
    const filtersToggle = h(
      'button',
      {
        type: 'button',
        class: 'replay-filters-toggle',
        'aria-expanded': 'false',
        'aria-controls': 'replay-filter-panel',
      },
      'Show filters',
    );
    filtersToggle.addEventListener('click', () => {
      const shown = this.main.querySelector('.replay-columns')!.classList.toggle('replay-filters-shown');
      filtersToggle.setAttribute('aria-expanded', String(shown));
      filtersToggle.textContent = shown ? 'Hide filters' : 'Show filters';
    });
    this.note.textContent = this.urlIgnored.length
      ? `The address holds filters this page cannot show, left out: ${this.urlIgnored.join(', ')}.`
      : '';
    // The pickers, the filters and the list share one column: an open player takes the rest of the page's width
    // and its height from right under the page's title.
    replaceChildren(
      this.main,
      h(
        'div',
        { class: 'replay-columns' },
        h(
          'div',
          { class: 'replay-list-column' },
          scope,
          this.note,
          filtersToggle,
          h(
            'div',
            { id: 'replay-filter-panel', class: 'replay-filter-panel' },
            this.filtersForm(),
            h('div', { class: 'replay-saved-views-slot' }),
          ),
          table,
          pager,
        ),
        viewer,
      ),
    );
    orgSelect.addEventListener('change', () => {
      this.note.textContent = '';
      this.closePlayer();
      void this.loadProjects(orgSelect.value, projectSelect);
    });
    projectSelect.addEventListener('change', () => {
      this.note.textContent = '';
      this.closePlayer();
      this.projectId = Number(projectSelect.value);
      this.offset = 0;
      this.mountViews();
      void this.loadRecordings();
    });
    if (user.organizations.length === 0) {
      this.setStatus('This key’s user belongs to no organization.');
      return;
    }
    void this.start(orgSelect, projectSelect);
  }

  /**
   * Opens on the key's current organization and project, unless that project has no recordings (under the
   * filters shown) and another one the key can read has: then on the first such one, saying so.
   */
  private async start(orgSelect: HTMLSelectElement, projectSelect: HTMLSelectElement): Promise<void> {
    this.setStatus('Looking for recordings…');
    const start = await this.findStart();
    if (this.api === null) return; // the key was forgotten meanwhile
    orgSelect.value = start.organizationId;
    await this.loadProjects(start.organizationId, projectSelect, start.projectId);
    if (start.note) this.note.textContent = start.note;
  }

  private async findStart(): Promise<{ organizationId: string; projectId?: number; note: string }> {
    const user = this.user!;
    const api = this.api!;
    const currentOrganization = user.organization ?? user.organizations[0];
    const current = user.team && user.team.organization === currentOrganization.id ? user.team : null;
    const stay = { organizationId: currentOrganization.id, projectId: current?.id, note: '' };
    let probes = 0;
    const hasRecordings = async (projectId: number): Promise<boolean> => {
      probes += 1;
      try {
        return (await api.recordings(projectId, filterQuery(this.filters, 1, 0))).count > 0;
      } catch {
        return false; // not readable with this key: not a place to start
      }
    };
    if (!current || (await hasRecordings(current.id))) return stay;
    const organizations = [
      currentOrganization,
      ...user.organizations.filter((o) => o.id !== currentOrganization.id),
    ];
    for (const organization of organizations) {
      let projects: { id: number; name: string }[];
      try {
        projects = (await api.projects(organization.id)).results;
      } catch {
        continue;
      }
      for (const project of projects) {
        if (project.id === current.id) continue;
        if (probes >= MAX_START_PROBES) return stay;
        if (await hasRecordings(project.id)) {
          return {
            organizationId: organization.id,
            projectId: project.id,
            note:
              `The key’s current project, ${current.name}, has no recordings${this.filtersAreDefault() ? ' in the last 7 days' : ' matching these filters'}: ` +
              `showing ${organization.name} / ${project.name}, which has.`,
          };
        }
      }
    }
    return stay;
  }

  private filtersAreDefault(): boolean {
    return JSON.stringify(this.filters) === JSON.stringify(DEFAULT_FILTERS);
  }

  private async loadProjects(
    organizationId: string,
    select: HTMLSelectElement,
    preferredProjectId?: number,
  ): Promise<void> {
    this.setStatus('Loading projects…');
    let projects: { id: number; name: string }[];
    try {
      projects = (await this.api!.projects(organizationId)).results;
    } catch (error) {
      // Without project:read the current project is still known from @me.
      const team = this.user?.team;
      if (
        error instanceof ApiRequestError &&
        error.status === 403 &&
        team &&
        team.organization === organizationId
      ) {
        projects = [team];
      } else {
        return this.fail(error);
      }
    }
    replaceChildren(select, ...projects.map((p) => h('option', { value: p.id }, p.name)));
    const current = projects.find((p) => p.id === (preferredProjectId ?? this.user?.team?.id)) ?? projects[0];
    if (!current) {
      this.projectId = null;
      this.setStatus('This organization has no projects.');
      return;
    }
    select.value = String(current.id);
    this.projectId = current.id;
    this.offset = 0;
    this.mountViews();
    await this.loadRecordings();
  }

  private filtersForm(): HTMLFormElement {
    const f = this.filters;
    const range = h(
      'select',
      { id: 'filter-date', name: 'date' },
      ...DATE_RANGES.map((r) => h('option', { value: r.value, selected: r.value === f.dateRange }, r.label)),
    );
    const from = h('input', { id: 'filter-from', type: 'datetime-local', value: f.customFrom });
    const to = h('input', { id: 'filter-to', type: 'datetime-local', value: f.customTo });
    const custom = h(
      'span',
      { class: 'replay-custom-range', hidden: f.dateRange !== 'custom' },
      h('label', { for: 'filter-from' }, 'From'),
      from,
      h('label', { for: 'filter-to' }, 'To'),
      to,
    );
    const operator = h(
      'select',
      { id: 'filter-duration', 'aria-label': 'Duration' },
      h('option', { value: 'any' }, 'Any duration'),
      h('option', { value: 'gt', selected: f.durationOperator === 'gt' }, 'Longer than'),
      h('option', { value: 'lt', selected: f.durationOperator === 'lt' }, 'Shorter than'),
    );
    const amount = h('input', {
      id: 'filter-duration-value',
      type: 'number',
      min: 0,
      step: 1,
      value: f.durationValue,
      'aria-label': 'Duration amount',
    });
    const unit = h(
      'select',
      { id: 'filter-duration-unit', 'aria-label': 'Duration unit' },
      h('option', { value: 'seconds', selected: f.durationUnit === 'seconds' }, 'seconds'),
      h('option', { value: 'minutes', selected: f.durationUnit === 'minutes' }, 'minutes'),
    );
    const person = h('input', {
      id: 'filter-person',
      type: 'search',
      value: f.person,
      placeholder: 'distinct id or person UUID',
      autocomplete: 'off',
    });
    const errors = h('input', { id: 'filter-errors', type: 'checkbox', checked: f.consoleErrors });
    const event = h('input', {
      id: 'filter-event',
      type: 'search',
      value: f.event,
      placeholder: 'event name, e.g. $pageview',
      autocomplete: 'off',
    });
    const eventKey = h('input', {
      id: 'filter-event-key',
      type: 'text',
      value: f.eventPropertyKey,
      placeholder: 'property (optional)',
      autocomplete: 'off',
      'aria-label': 'Event property',
    });
    const eventValue = h('input', {
      id: 'filter-event-value',
      type: 'text',
      value: f.eventPropertyValue,
      placeholder: 'value',
      autocomplete: 'off',
      'aria-label': 'Event property value',
    });
    const notEvent = h('input', {
      id: 'filter-not-event',
      type: 'search',
      value: f.notEvent,
      placeholder: 'event name',
      autocomplete: 'off',
    });
    const form = h(
      'form',
      { class: 'replay-filters', 'aria-label': 'Filters' },
      h('span', {}, h('label', { for: 'filter-date' }, 'Date'), range),
      custom,
      h('span', {}, h('label', { for: 'filter-duration' }, 'Duration'), operator, amount, unit),
      h('span', {}, h('label', { for: 'filter-person' }, 'Person'), person),
      h('span', {}, errors, h('label', { for: 'filter-errors' }, 'With console errors')),
      h(
        'span',
        { class: 'replay-event-filter' },
        h('label', { for: 'filter-event' }, 'Had event'),
        event,
        eventKey,
        h('span', { 'aria-hidden': 'true' }, '='),
        eventValue,
      ),
      h('span', {}, h('label', { for: 'filter-not-event' }, 'Did not have event'), notEvent),
      h('button', { type: 'submit' }, 'Apply filters'),
    );
    range.addEventListener('change', () => {
      custom.hidden = range.value !== 'custom';
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.filters = {
        dateRange: range.value as DateRange,
        customFrom: from.value,
        customTo: to.value,
        durationOperator: operator.value as FilterValues['durationOperator'],
        durationValue: Number(amount.value),
        durationUnit: unit.value as FilterValues['durationUnit'],
        person: person.value,
        consoleErrors: errors.checked,
        event: event.value,
        eventPropertyKey: eventKey.value,
        eventPropertyValue: eventValue.value,
        notEvent: notEvent.value,
      };
      this.offset = 0;
      this.keepFiltersInUrl();
      void this.loadRecordings();
    });
    return form;
  }

  /** The filters shown, in the page's address (replaced, not pushed: the back button leaves the page). */
  private keepFiltersInUrl(): void {
    const query = filtersToUrlQuery(this.filters).toString();
    history.replaceState(
      history.state,
      '',
      `${location.pathname}${query ? `?${query}` : ''}${location.hash}`,
    );
  }

  /** The saved views of the current project, under the filters (saved-views.ts). */
  private mountViews(): void {
    const slot = this.main.querySelector<HTMLElement>('.replay-saved-views-slot');
    if (!slot || this.projectId === null) return;
    const views = new SavedViews(this.api!, this.projectId, {
      current: () => this.filters,
      apply: (values) => {
        this.filters = values;
        this.keepFiltersInUrl();
        this.main.querySelector('.replay-filters')?.replaceWith(this.filtersForm());
        this.offset = 0;
        void this.loadRecordings();
      },
    });
    this.views = views;
    replaceChildren(slot, views.element);
    void views.load();
  }

  // ---- list ---------------------------------------------------------------------------------------------------

  private async loadRecordings(): Promise<void> {
    if (this.projectId === null) return;
    this.setStatus('Loading recordings…');
    const projectId = this.projectId;
    // Only the latest request is shown: an earlier one answering late (other filters) is dropped.
    const request = ++this.listRequests;
    let page;
    let empty = '';
    try {
      page = await this.api!.recordings(projectId, filterQuery(this.filters, PAGE_SIZE, this.offset));
      if (page.count === 0) empty = await this.emptyMessage(projectId);
    } catch (error) {
      if (request !== this.listRequests) return;
      return this.fail(error);
    }
    if (request !== this.listRequests) return;
    if (projectId !== this.projectId) return; // another project was chosen meanwhile
    const table = this.main.querySelector<HTMLTableElement>('.replay-list')!;
    this.rows.clear();
    const body = h('tbody');
    for (const recording of page.results) {
      const row = this.recordingRow(recording);
      this.rows.set(recording.id, row);
      body.appendChild(row);
    }
    if (empty) {
      body.appendChild(h('tr', {}, h('td', { class: 'replay-empty', colspan: 7 }, empty)));
    }
    const first = page.count === 0 ? 0 : this.offset + 1;
    const last = this.offset + page.results.length;
    replaceChildren(
      table,
      h('caption', {}, `Recordings ${first}–${last} of ${page.count}`),
      h('thead', {}, h('tr', {}, ...COLUMNS.map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
      body,
    );
    this.renderPager(page.count, page.results.length);
    this.setStatus(empty);
  }

  /** Why the list is empty: the filters leave everything out, or the project has no recordings at all. */
  private async emptyMessage(projectId: number): Promise<string> {
    const all = await this.api!.recordings(projectId, new URLSearchParams({ limit: '1' }));
    if (all.count === 0) {
      return 'This project has no recordings yet. They appear here once a site with the PostHog snippet records sessions into it.';
    }
    return `No recordings match these filters. The project has ${all.count} recording${all.count === 1 ? '' : 's'} in all: widen the date range or clear the filters.`;
  }

  private recordingRow(r: Recording): HTMLTableRowElement {
    const started = new Date(r.start_time);
    const person = r.person?.name || r.distinct_id;
    const play = h(
      'button',
      {
        type: 'button',
        class: 'replay-play',
        'aria-label': `Play the recording started ${started.toLocaleString()}`,
      },
      'Play',
    );
    play.addEventListener('click', () => this.open(r));
    return h(
      'tr',
      {
        'data-recording': r.id,
        class: r.viewed ? 'replay-viewed' : 'replay-unviewed',
        'aria-current': r.id === this.openId ? 'true' : null,
      },
      h(
        'td',
        {},
        h(
          'time',
          { datetime: r.start_time, title: started.toLocaleString() },
          started.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' }),
        ),
        r.viewed ? null : h('span', { class: 'replay-badge' }, 'new'),
        r.ongoing ? h('span', { class: 'replay-badge' }, 'ongoing') : null,
      ),
      h('td', { class: 'replay-col-duration' }, formatClock(r.recording_duration * 1000)),
      h('td', { class: 'replay-person', title: person }, person),
      h('td', { class: 'replay-url replay-col-extra', title: r.start_url ?? '' }, r.start_url ?? '—'),
      h('td', { class: 'replay-col-extra' }, `${r.click_count} clicks, ${r.keypress_count} keys`),
      h('td', { class: 'replay-col-extra' }, String(r.console_error_count)),
      h('td', { class: 'replay-col-play' }, play),
    );
  }

  private renderPager(count: number, shown: number): void {
    const pager = this.main.querySelector<HTMLElement>('.replay-pager')!;
    const previous = h('button', { type: 'button', disabled: this.offset === 0 }, 'Previous page');
    const next = h('button', { type: 'button', disabled: this.offset + shown >= count }, 'Next page');
    previous.addEventListener('click', () => {
      this.offset = Math.max(0, this.offset - PAGE_SIZE);
      void this.loadRecordings();
    });
    next.addEventListener('click', () => {
      this.offset += PAGE_SIZE;
      void this.loadRecordings();
    });
    replaceChildren(pager, previous, next);
  }

  // ---- one recording ------------------------------------------------------------------------------------------

  private open(recording: Recording): void {
    const projectId = this.projectId!;
    const api = this.api!;
    this.player?.destroy();
    const viewer = this.main.querySelector<HTMLElement>('.replay-viewer')!;
    viewer.hidden = false;
    this.main.querySelector('.replay-columns')!.classList.add('replay-columns-open');
    this.markOpen(recording.id);
    const title = h('h2', { id: 'replay-viewer-title', tabindex: -1 }, 'Recording');
    const viewed = h(
      'p',
      { class: 'replay-viewed-state', role: 'status' },
      recording.viewed ? 'Viewed' : 'Not viewed yet',
    );
    const sharePanel = h('div', { class: 'replay-share' });
    const shareButton = h('button', { type: 'button', class: 'replay-share-button' }, 'Share');
    const closeButton = h(
      'button',
      { type: 'button', class: 'replay-close', 'aria-label': 'Close the player' },
      'Close',
    );
    closeButton.addEventListener('click', () => this.closePlayer(true));
    shareButton.addEventListener('click', () => void this.share(recording, sharePanel));
    let inspector: Inspector | null = null;
    const player = new Player({
      onEvents: (events) => inspector?.add(events),
      info: recording,
      snapshotsUrl: `${recordingPath(projectId, recording.id)}/snapshots`,
      headers: api.headers,
      chrome: true,
      keyboardTarget: viewer,
      onFirstPlay: () => {
        if (recording.viewed) return;
        api.markViewed(projectId, recording.id).then(
          () => {
            recording.viewed = true;
            viewed.textContent = 'Viewed';
            const row = this.rows.get(recording.id);
            row?.classList.replace('replay-unviewed', 'replay-viewed');
            row?.querySelector('.replay-badge')?.remove();
          },
          (error: Error) => {
            viewed.textContent = `Could not mark it viewed: ${error.message}`;
          },
        );
      },
    });
    this.player = player;
    inspector = new Inspector(player);
    const person = recording.person?.name || recording.distinct_id;
    replaceChildren(
      viewer,
      h(
        'div',
        { class: 'replay-viewer-actions' },
        h(
          'div',
          { class: 'replay-viewer-about' },
          title,
          h('p', { class: 'replay-viewer-facts', title: person }, `Person: ${person}`),
          viewed,
        ),
        h(
          'span',
          { class: 'replay-viewer-buttons' },
          shareButton,
          this.views?.pinControl(recording),
          closeButton,
        ),
      ),
      sharePanel,
      h('div', { class: 'player-with-inspector' }, player.element, inspector.element),
    );
    this.fitViewer();
    title.focus();
    void player.load();
    void this.loadSessionEvents(api, projectId, recording, inspector);
  }

  /** The session's events into the inspector, when the key may read events (else it says what is missing). */
  private async loadSessionEvents(
    api: ApiClient,
    projectId: number,
    recording: Recording,
    inspector: Inspector,
  ): Promise<void> {
    const missing =
      'The session’s events (page views, clicks, custom events, exceptions) need a key with the scope query:read.';
    let scopes: string[];
    try {
      scopes = await api.scopes();
    } catch {
      scopes = ['query:read']; // unknown: ask, and say so if the read is refused
    }
    if (!grantsEvents(scopes)) return inspector.showEventsNote(missing);
    await inspector.loadEvents(
      async (offset, limit, signal) => {
        const page = await api.sessionEvents(projectId, recording, offset, limit, signal);
        return { count: page.count, results: page.results.map(fromApiEvent) };
      },
      (error) =>
        error instanceof ApiRequestError && error.status === 403
          ? missing
          : `The session’s events could not be loaded: ${error.message}`,
    );
  }

  /** Closes the player and gives the list the whole width again (focus back on the row's Play button). */
  private closePlayer(refocus = false): void {
    const id = this.openId;
    this.player?.destroy();
    this.player = null;
    this.markOpen(null);
    const viewer = this.main.querySelector<HTMLElement>('.replay-viewer');
    if (viewer) {
      viewer.hidden = true;
      replaceChildren(viewer);
    }
    this.main.querySelector('.replay-columns')?.classList.remove('replay-columns-open');
    if (refocus && id) this.rows.get(id)?.querySelector<HTMLButtonElement>('.replay-play')?.focus();
  }

  private markOpen(id: string | null): void {
    this.openId = id;
    for (const [rowId, row] of this.rows) {
      if (rowId === id) row.setAttribute('aria-current', 'true');
      else row.removeAttribute('aria-current');
    }
  }

  private async share(recording: Recording, panel: HTMLElement): Promise<void> {
    const api = this.api!;
    const projectId = this.projectId!;
    replaceChildren(panel, h('p', { role: 'status' }, 'Turning sharing on…'));
    let sharing;
    try {
      sharing = await api.sharing(projectId, recording.id);
      if (!sharing.enabled) sharing = await api.setSharing(projectId, recording.id, true);
    } catch (error) {
      replaceChildren(
        panel,
        h('p', { class: 'replay-error', role: 'alert' }, `Sharing failed: ${(error as Error).message}`),
      );
      return;
    }
    const link = `${location.origin}/shared/${encodeURIComponent(sharing.access_token)}`;
    const embed = `<iframe src="${location.origin}/embedded/${encodeURIComponent(sharing.access_token)}" width="960" height="600" frameborder="0" allowfullscreen title="Session recording"></iframe>`;
    const linkInput = h('input', { id: 'replay-share-link', type: 'text', readonly: true, value: link });
    const embedInput = h('input', { id: 'replay-share-embed', type: 'text', readonly: true, value: embed });
    const copied = h('span', { role: 'status', class: 'replay-copied' });
    const copy = h('button', { type: 'button' }, 'Copy link');
    copy.addEventListener('click', () => void copyText(linkInput, copied));
    const copyEmbed = h('button', { type: 'button' }, 'Copy embed code');
    copyEmbed.addEventListener('click', () => void copyText(embedInput, copied));
    const stop = h('button', { type: 'button' }, 'Stop sharing');
    stop.addEventListener('click', async () => {
      try {
        await api.setSharing(projectId, recording.id, false);
        replaceChildren(panel, h('p', { role: 'status' }, 'Sharing is off: the link no longer works.'));
      } catch (error) {
        copied.textContent = `Could not turn sharing off: ${(error as Error).message}`;
      }
    });
    replaceChildren(
      panel,
      h('p', {}, 'Anyone with this link can watch the recording (without its person):'),
      h('label', { for: 'replay-share-link' }, 'Share link'),
      h('span', { class: 'replay-copy-row' }, linkInput, copy),
      h('label', { for: 'replay-share-embed' }, 'Embed code'),
      h('span', { class: 'replay-copy-row' }, embedInput, copyEmbed),
      h('span', { class: 'replay-copy-row' }, stop, copied),
    );
    linkInput.select();
  }

  // ---- status -------------------------------------------------------------------------------------------------

  private setStatus(text: string): void {
    this.status.textContent = text;
    this.status.classList.remove('replay-error');
    this.fitViewer();
  }

  /**
   * The open player's panel reaches from where the list starts to the bottom of the window (in the layout with
   * the list beside it, replay.css), so the recording is drawn as large as the window allows and the player's
   * controls are in view without scrolling; while the page scrolls the panel stays in view.
   */
  private fitViewer(): void {
    const columns = this.main.querySelector<HTMLElement>('.replay-columns-open');
    if (!columns) return;
    const top = columns.getBoundingClientRect().top + window.scrollY;
    columns.style.setProperty(
      '--replay-viewer-height',
      `${Math.max(VIEWER_MIN_HEIGHT, Math.floor(window.innerHeight - top - VIEWER_MARGIN))}px`,
    );
  }

  private fail(error: unknown): void {
    if (error instanceof ApiRequestError && error.status === 401) {
      sessionStorage.removeItem(KEY_STORAGE);
      this.showKeyForm('The key is no longer valid.');
      return;
    }
    this.status.textContent =
      error instanceof ApiRequestError && error.status === 403
        ? `Not allowed with this key: ${error.message}`
        : `Something went wrong: ${(error as Error).message}`;
    this.status.classList.add('replay-error');
    this.fitViewer();
  }
}

async function copyText(input: HTMLInputElement, status: HTMLElement): Promise<void> {
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    status.textContent = 'Copied.';
  } catch {
    // The clipboard API needs a secure context; the text is selected for copying by hand.
    status.textContent = 'Press Ctrl+C (⌘C) to copy the selected text.';
  }
}

/** The list's columns (header, class); the `replay-col-extra` ones give way while the player is open. */
const COLUMNS: [string, string][] = [
  ['Started', 'replay-col-started'],
  ['Duration', 'replay-col-duration'],
  ['Person', 'replay-col-person'],
  ['Start URL', 'replay-col-extra replay-col-url'],
  ['Activity', 'replay-col-extra replay-col-activity'],
  ['Console errors', 'replay-col-extra replay-col-errors'],
  ['', 'replay-col-play'],
];

const app = document.getElementById('app');
if (app) new RecordingsBrowser(app);
