/** The few API calls the recordings browser makes, with the personal API key typed into the page. */
import type { ApiEvent } from '../lib/session-events.js';

/** A session's events are read from this long before its recording's start to as long after its end. */
export const SESSION_EVENTS_MARGIN_MS = 5 * 60_000;

export interface OrganizationSummary {
  id: string;
  name: string;
  slug: string;
  membership_level: number | null;
}

export interface Project {
  id: number;
  uuid: string;
  organization: string;
  name: string;
}

export interface CurrentUser {
  email: string;
  first_name: string;
  organization: OrganizationSummary | null;
  organizations: OrganizationSummary[];
  team: Project | null;
}

export interface PersonSummary {
  name?: string | null;
  distinct_ids?: string | string[];
}

export interface Recording {
  id: string;
  distinct_id: string;
  viewed: boolean;
  recording_duration: number;
  active_seconds: number;
  start_time: string;
  end_time: string;
  click_count: number;
  keypress_count: number;
  console_log_count: number;
  console_warn_count: number;
  console_error_count: number;
  start_url: string | null;
  person?: PersonSummary | null;
  ongoing: boolean;
}

export interface Sharing {
  enabled: boolean;
  access_token: string;
  created_at: string;
}

export interface ListPage<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** An answer other than 2xx, with the service's error body when there was one. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/** Whether a key's scopes let it read events (a write scope grants the read). */
export function grantsEvents(scopes: readonly string[]): boolean {
  return scopes.includes('*') || scopes.includes('query:read') || scopes.includes('query:write');
}

export class ApiClient {
  private keyScopes: Promise<string[]> | null = null;

  constructor(readonly key: string) {}

  /** The key's scopes (asked once). */
  scopes(): Promise<string[]> {
    this.keyScopes ??= this.request<{ scopes: string[] }>('GET', '/api/personal_api_keys/@current').then(
      (key) => key.scopes,
    );
    this.keyScopes.catch(() => (this.keyScopes = null));
    return this.keyScopes;
  }

  get headers(): Record<string, string> {
    return { Authorization: `Bearer ${this.key}` };
  }

  async request<T>(
    method: 'GET' | 'PATCH' | 'POST',
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        signal,
        headers: body === undefined ? this.headers : { ...this.headers, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ApiRequestError(0, `The service could not be reached (${(error as Error).message}).`);
    }
    if (!response.ok) {
      let detail = `HTTP ${response.status}`;
      let code: string | null = null;
      try {
        const error = (await response.json()) as { detail?: unknown; code?: unknown };
        if (typeof error.detail === 'string') detail = error.detail;
        if (typeof error.code === 'string') code = error.code;
      } catch {
        // not a JSON error body
      }
      throw new ApiRequestError(response.status, detail, code);
    }
    return (await response.json()) as T;
  }

  me(): Promise<CurrentUser> {
    return this.request('GET', '/api/users/@me');
  }

  projects(organizationId: string): Promise<ListPage<Project>> {
    return this.request(
      'GET',
      `/api/organizations/${encodeURIComponent(organizationId)}/projects?limit=1000`,
    );
  }

  recordings(projectId: number, query: URLSearchParams): Promise<ListPage<Recording>> {
    return this.request('GET', `/api/projects/${projectId}/session_recordings?${query.toString()}`);
  }

  /**
   * One page of a recording's session events (newest first, as the events API lists them), from
   * SESSION_EVENTS_MARGIN_MS before its start to as long after its end. Needs the scope `query:read`.
   */
  sessionEvents(
    projectId: number,
    recording: Pick<Recording, 'id' | 'start_time' | 'end_time'>,
    offset: number,
    limit: number,
    signal?: AbortSignal,
  ): Promise<ListPage<ApiEvent>> {
    const query = new URLSearchParams({
      session_id: recording.id,
      limit: String(limit),
      offset: String(offset),
    });
    const start = Date.parse(recording.start_time);
    const end = Date.parse(recording.end_time);
    if (Number.isFinite(start)) query.set('after', new Date(start - SESSION_EVENTS_MARGIN_MS).toISOString());
    if (Number.isFinite(end)) query.set('before', new Date(end + SESSION_EVENTS_MARGIN_MS).toISOString());
    return this.request('GET', `/api/projects/${projectId}/events?${query.toString()}`, undefined, signal);
  }

  markViewed(projectId: number, id: string): Promise<Recording> {
    return this.request('PATCH', recordingPath(projectId, id), { viewed: true });
  }

  sharing(projectId: number, id: string): Promise<Sharing> {
    return this.request('GET', `${recordingPath(projectId, id)}/sharing`);
  }

  setSharing(projectId: number, id: string, enabled: boolean): Promise<Sharing> {
    return this.request('PATCH', `${recordingPath(projectId, id)}/sharing`, { enabled });
  }
}

export function recordingPath(projectId: number, id: string): string {
  return `/api/projects/${projectId}/session_recordings/${encodeURIComponent(id)}`;
}
