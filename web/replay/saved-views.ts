/**
 * Saved views of the recordings browser: the project's recording playlists (PostHog's
 * `session_recording_playlists`). A view keeps the browser's filters as the list's own query parameters, under
 * their names (`date_from`, `date_to`, `having_predicates`, `console_log_filters`, `person_uuid`, `distinct_id`);
 * picking it applies them. A played recording can be pinned to a view.
 */
import './saved-views.css';
import { h, replaceChildren } from '../lib/dom.js';
import { ApiRequestError, type ApiClient, type ListPage, type Recording } from './api.js';
import type { FilterValues } from './filters.js';
import {
  filtersFromSaved,
  grantsViews,
  type Playlist,
  savedFilters,
  viewName,
  VIEWS_READ_SCOPE,
  VIEWS_SHOWN,
} from './saved-filters.js';

export interface SavedViewsHooks {
  /** The browser's current filters (what "Save" keeps). */
  current(): FilterValues;
  /** Applies a view's filters to the browser and reloads its list. */
  apply(values: FilterValues): void;
}

const playlistsPath = (projectId: number) => `/api/projects/${projectId}/session_recording_playlists`;

/** The picker and the save form of a project's views, and the pin control of a played recording. */
export class SavedViews {
  readonly element = h('form', { class: 'replay-saved-views', 'aria-label': 'Saved views' });
  private playlists: Playlist[] = [];
  /** The pin controls shown (one per opened recording; a view saved later is added to them). */
  private readonly pinControls = new Set<{
    select: HTMLSelectElement;
    button: HTMLButtonElement;
    state: HTMLElement;
  }>();
  private readonly select = h('select', { id: 'saved-view' });
  private readonly name = h('input', {
    id: 'saved-view-name',
    type: 'text',
    maxlength: 400,
    placeholder: 'Name of the view',
    autocomplete: 'off',
  });
  private readonly message = h('span', { class: 'replay-saved-views-message', role: 'status' });

  constructor(
    private readonly api: ApiClient,
    private readonly projectId: number,
    private readonly hooks: SavedViewsHooks,
  ) {
    const save = h('button', { type: 'submit', class: 'replay-save-view' }, 'Save filters as view');
    replaceChildren(
      this.element,
      h('span', {}, h('label', { for: 'saved-view' }, 'Saved view'), this.select),
      h('span', {}, h('label', { for: 'saved-view-name' }, 'New view'), this.name, save),
      this.message,
    );
    this.select.addEventListener('change', () => this.pick(this.select.value));
    this.element.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.save();
    });
  }

  async load(): Promise<void> {
    try {
      // Any key may read its own scopes: a key without the views' scope is told so, without a request refused.
      const key = await this.api.request<{ scopes: string[] }>('GET', '/api/personal_api_keys/@current');
      if (!grantsViews(key.scopes)) {
        this.playlists = [];
        this.renderOptions();
        this.select.disabled = true;
        this.say(`Saved views need the key scope ${VIEWS_READ_SCOPE}.`);
        return;
      }
      const page = await this.api.request<ListPage<Playlist>>(
        'GET',
        `${playlistsPath(this.projectId)}?limit=${VIEWS_SHOWN}`,
      );
      this.playlists = page.results;
      this.renderOptions();
      if (page.count > page.results.length) {
        this.say(`The ${VIEWS_SHOWN} most recently changed of ${page.count} views are offered.`);
      }
    } catch (error) {
      this.playlists = [];
      this.renderOptions();
      this.say(`Saved views are not available: ${(error as Error).message}`, true);
    }
  }

  /** The control that pins `recording` to a view, for the player's panel. */
  pinControl(recording: Recording): HTMLElement {
    const select = h(
      'select',
      { id: 'pin-view', 'aria-label': 'View to pin the recording to' },
      ...this.playlists.map((p) => h('option', { value: p.short_id }, viewName(p))),
    );
    const button = h('button', { type: 'button', class: 'replay-pin' }, 'Pin to view');
    const state = h('span', { class: 'replay-pin-state', role: 'status' });
    const control = h('span', { class: 'replay-pin-control' }, select, button, state);
    if (!this.playlists.length) {
      select.disabled = true;
      button.disabled = true;
      state.textContent = 'Save a view to pin recordings to it.';
    }
    for (const other of this.pinControls) if (!other.select.isConnected) this.pinControls.delete(other);
    this.pinControls.add({ select, button, state });
    button.addEventListener('click', async () => {
      const playlist = this.playlists.find((p) => p.short_id === select.value);
      if (!playlist) return;
      state.textContent = 'Pinning…';
      button.dataset.used = 'true';
      try {
        await this.api.request(
          'POST',
          `${playlistsPath(this.projectId)}/${encodeURIComponent(playlist.short_id)}/recordings/${encodeURIComponent(recording.id)}`,
        );
        state.textContent = `Pinned to “${viewName(playlist)}”.`;
      } catch (error) {
        state.textContent = `Could not pin it: ${(error as Error).message}`;
      }
    });
    return control;
  }

  private renderOptions(selected = ''): void {
    replaceChildren(
      this.select,
      h('option', { value: '' }, this.playlists.length ? 'Choose a view…' : 'No saved views'),
      ...this.playlists.map((p) =>
        h('option', { value: p.short_id, selected: p.short_id === selected }, viewName(p)),
      ),
    );
  }

  private pick(shortId: string): void {
    const playlist = this.playlists.find((p) => p.short_id === shortId);
    if (!playlist) return;
    const { values, ignored } = filtersFromSaved(playlist.filters ?? {});
    this.hooks.apply(values);
    this.say(
      ignored.length
        ? `Applied “${viewName(playlist)}”; not shown here and left out: ${ignored.join(', ')}.`
        : `Applied “${viewName(playlist)}”.`,
    );
  }

  private async save(): Promise<void> {
    const name = this.name.value.trim();
    if (!name) return this.say('Name the view first.', true);
    try {
      const created = await this.api.request<Playlist>('POST', playlistsPath(this.projectId), {
        name,
        filters: savedFilters(this.hooks.current()),
      });
      this.playlists.unshift(created);
      this.renderOptions(created.short_id);
      for (const control of this.pinControls) {
        control.select.prepend(h('option', { value: created.short_id }, viewName(created)));
        control.select.value = created.short_id;
        control.select.disabled = false;
        control.button.disabled = false;
        if (!control.button.dataset.used) control.state.textContent = '';
      }
      this.name.value = '';
      this.say(`Saved “${viewName(created)}”.`);
    } catch (error) {
      this.say(
        error instanceof ApiRequestError && error.status === 403
          ? `Not allowed with this key: ${error.message}`
          : `Could not save the view: ${error instanceof Error ? error.message : String(error)}`,
        true,
      );
    }
  }

  private say(text: string, error = false): void {
    this.message.textContent = text;
    this.message.classList.toggle('replay-error', error);
  }
}
