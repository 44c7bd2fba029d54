import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isDatabaseUnavailable, isStatementTimeout } from '../common/errors/database-errors.js';
import { isUuid } from '../common/validation/ids.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import type { AccessControlResource } from '../common/vocabulary/access-levels.js';
import { AppConfig } from '../config/config.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import {
  type ActivityCursor,
  type ActivityLogFilter,
  ActivityLogRepository,
  type ActivityLogRow,
  type NewActivityLog,
} from './activity-log.repository.js';
import type { ActivityLogDto, ActivityLogPageDto } from './dto/activity-log.dto.js';

/** Most entries in one page of the list. */
export const ACTIVITY_LOG_MAX_LIMIT = 100;
/** Entries per CSV query (the export reads the range in pages of this many). */
const CSV_PAGE = 1000;

/** The scopes of the entries of each resource access rules govern: a member at `none` on it sees none of them. */
const RESOURCE_SCOPES: Record<AccessControlResource, readonly string[]> = {
  session_recording: ['Replay', 'SessionRecordingPlaylist'],
  batch_export: ['BatchExport'],
  plugin: ['PluginConfig'],
  query: ['Person'],
};

/** The list's query parameters (PostHog's `user`, `scope`, `item_id`, a date range, the cursor). */
export interface ActivityLogQuery {
  user?: string;
  scope?: string | string[];
  scopes?: string;
  item_id?: string;
  date_from?: string;
  date_to?: string;
  cursor?: string;
  limit?: string;
  /** `json` (the default) only: the CSV is the `…/activity_log/export` route's. */
  format?: string;
}

/** The error a write answers when its activity log entry could not be written: the write was rolled back. */
export function activityLogFailed(): ApiError {
  return new ApiError(
    500,
    'activity_log_failed',
    'Nothing was changed: the activity log entry of this change could not be written. Try again later.',
  );
}

/**
 * A failure of the log's insert answered as it is rather than as `activity_log_failed`: the database unreachable,
 * the API's share of the pool busy (503 `unavailable`) and the statement timeout (mapped to its 503 by
 * ApiRequestInterceptor) say the service is overloaded, not that the log is broken.
 */
function passesThrough(err: unknown): boolean {
  return (
    isDatabaseUnavailable(err) ||
    isStatementTimeout(err) ||
    (err instanceof ApiError && err.getStatus() === 503)
  );
}

/**
 * The activity log: the entries written (`record`, in the transaction of the write they record; `recordRead`,
 * before a recording is served), and the project and organization lists, newest first, through a cursor, as
 * PostHog's `activity_log` endpoints answer them, and as CSV.
 */
@Injectable()
export class ActivityLogService {
  constructor(
    private readonly logs: ActivityLogRepository,
    private readonly projects: ProjectsService,
    private readonly memberships: MembershipsService,
    private readonly config: AppConfig,
  ) {}

  /**
   * Inserts `entry` in the caller's transaction: one statement. A failure throws (a database outage as it is,
   * anything else as `activity_log_failed`), so the transaction, and the change it records, rolls back.
   */
  async record(entry: NewActivityLog): Promise<void> {
    try {
      await this.logs.insert(entry);
    } catch (err) {
      if (passesThrough(err)) throw err;
      throw activityLogFailed();
    }
  }

  /**
   * Inserts the entry of a read of a recording, its snapshots or its events in the project `teamId`: one
   * statement, before anything is served; when it fails the read answers an error instead.
   */
  async recordRead(
    entry: NewActivityLog & { teamId: number; userId: number },
    principal: Principal,
  ): Promise<void> {
    try {
      await this.logs.insertRead(entry, {
        organizations: principal.onlyOrganizations,
        projects: principal.onlyProjects,
      });
    } catch (err) {
      if (passesThrough(err)) throw err;
      throw new ApiError(
        500,
        'activity_log_failed',
        'Not served: the activity log entry of this read could not be written. Try again later.',
      );
    }
  }

  /**
   * Inserts the entry of a read through a sharing link (`/api/shared/:access_token…`): no user, the address;
   * one statement before anything is served; when it fails the read answers an error instead.
   */
  async recordSharedRead(
    accessToken: string,
    activity: string,
    detail: Record<string, unknown>,
    ip: string | null,
  ): Promise<void> {
    try {
      await this.logs.insertSharedRead(accessToken, activity, detail, ip);
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      throw new ApiError(
        500,
        'activity_log_failed',
        'Not served: the activity log entry of this read could not be written. Try again later.',
      );
    }
  }

  /**
   * The project's log: for members who may see the project (404 otherwise, as for the project itself); the
   * entries of a resource the caller's access rules put at `none` are left out.
   */
  async listForProject(
    principal: Principal,
    projectId: number,
    query: ActivityLogQuery,
    url: URL,
  ): Promise<ActivityLogPageDto> {
    const filter = await this.projectFilter(principal, projectId, query);
    return this.page(filter, query, url);
  }

  /** The organization's log (its own entries and its projects'): admins and owners only (403 below). */
  async listForOrganization(
    principal: Principal,
    organizationId: string,
    query: ActivityLogQuery,
    url: URL,
  ): Promise<ActivityLogPageDto> {
    const filter = await this.organizationFilter(principal, organizationId, query);
    return this.page(filter, query, url);
  }

  /** The project's entries as CSV lines (header first), newest first, at most ACTIVITY_LOG_CSV_MAX_ROWS. */
  async *csvForProject(
    principal: Principal,
    projectId: number,
    query: ActivityLogQuery,
  ): AsyncGenerator<string> {
    yield* this.csv(await this.projectFilter(principal, projectId, query));
  }

  async *csvForOrganization(
    principal: Principal,
    organizationId: string,
    query: ActivityLogQuery,
  ): AsyncGenerator<string> {
    yield* this.csv(await this.organizationFilter(principal, organizationId, query));
  }

  private async projectFilter(
    principal: Principal,
    projectId: number,
    query: ActivityLogQuery,
  ): Promise<ActivityLogFilter> {
    const filter = parseFilter(query);
    const { access } = await this.projects.retrieve(principal, projectId);
    if (!access.visible) throw ApiError.notFound();
    const hidden = (Object.keys(RESOURCE_SCOPES) as AccessControlResource[])
      .filter((resource) => access.resource(resource).level === 'none')
      .flatMap((resource) => RESOURCE_SCOPES[resource]);
    return { ...filter, teamId: projectId, hiddenScopes: hidden };
  }

  private async organizationFilter(
    principal: Principal,
    organizationId: string,
    query: ActivityLogQuery,
  ): Promise<ActivityLogFilter> {
    const filter = parseFilter(query);
    const organization = await this.memberships.requireAccess(
      principal,
      organizationId,
      MembershipLevel.ADMIN,
    );
    return { ...filter, organizationId: organization.organizationId };
  }

  private async page(
    filter: ActivityLogFilter,
    query: ActivityLogQuery,
    url: URL,
  ): Promise<ActivityLogPageDto> {
    if (query.format !== undefined && query.format !== '' && query.format !== 'json') {
      // Not an alias of the export (a page and a stream differ in their bounds and links): said, never ignored.
      throw ApiError.validation(
        "'format' must be json: this log as CSV is GET …/activity_log/export/ (the same filters).",
        'format',
      );
    }
    const limit = parseLimit(query.limit);
    const cursor = query.cursor === undefined || query.cursor === '' ? null : parseCursor(query.cursor);
    const rows = await this.logs.list(filter, cursor, limit + 1);
    const more = rows.length > limit;
    // Reading forwards the extra row is past the page's end; reading backwards (rows come newest first) it is
    // before the page's start.
    const page = cursor?.direction === 'after' ? (more ? rows.slice(1) : rows) : rows.slice(0, limit);
    const link = (direction: 'before' | 'after', row: ActivityLogRow | undefined) => {
      if (!row) return null;
      const next = new URL(url.href);
      next.searchParams.set('cursor', encodeCursor({ direction, atUs: row.at_us, id: row.id }));
      return next.href;
    };
    const forwards = cursor?.direction !== 'after';
    const hasNext = forwards ? more : true;
    const hasPrevious = forwards ? cursor !== null : more;
    return {
      next: hasNext && page.length ? link('before', page[page.length - 1]) : null,
      previous: hasPrevious && page.length ? link('after', page[0]) : null,
      results: page.map(toActivityLogDto),
    };
  }

  private async *csv(filter: ActivityLogFilter): AsyncGenerator<string> {
    yield `${CSV_COLUMNS.join(',')}\n`;
    let cursor: ActivityCursor | null = null;
    let left = this.config.get('ACTIVITY_LOG_CSV_MAX_ROWS');
    while (left > 0) {
      const rows = await this.logs.list(filter, cursor, Math.min(CSV_PAGE, left));
      if (!rows.length) return;
      yield rows.map((row) => `${csvLine(row)}\n`).join('');
      left -= rows.length;
      const last = rows[rows.length - 1];
      cursor = { direction: 'before', atUs: last.at_us, id: last.id };
      if (rows.length < CSV_PAGE) return;
    }
  }
}

/** The CSV's columns. */
const CSV_COLUMNS = [
  'id',
  'created_at',
  'organization_id',
  'team_id',
  'user_uuid',
  'user_email',
  'is_system',
  'api_key_id',
  'ip',
  'activity',
  'scope',
  'item_id',
  'detail',
];

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : JSON.stringify(value);
  // A cell starting with = + - @ is a formula to spreadsheets: prefixed with a quote.
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

function csvLine(row: ActivityLogRow): string {
  return [
    row.id,
    row.created_at,
    row.organization_id,
    row.team_id,
    row.user_uuid,
    row.user_email,
    row.is_system,
    row.api_key_id,
    row.ip,
    row.activity,
    row.scope,
    row.item_id,
    row.detail,
  ]
    .map(csvField)
    .join(',');
}

/** An entry in PostHog's shape, with the key and address beside it. */
export function toActivityLogDto(row: ActivityLogRow): ActivityLogDto {
  return {
    id: row.id,
    user:
      row.user_id === null || row.user_uuid === null
        ? null
        : {
            id: row.user_id,
            uuid: row.user_uuid,
            distinct_id: row.user_distinct_id,
            first_name: row.user_first_name ?? '',
            last_name: row.user_last_name ?? '',
            email: row.user_email ?? '',
          },
    unread: false,
    is_system: row.is_system,
    activity: row.activity,
    scope: row.scope,
    item_id: row.item_id,
    detail: row.detail,
    created_at: row.created_at.toISOString(),
    organization_id: row.organization_id,
    team_id: row.team_id,
    api_key_id: row.api_key_id,
    ip: row.ip,
  };
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return ACTIVITY_LOG_MAX_LIMIT;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw.trim())) {
    throw ApiError.validation("'limit' must be a non-negative integer.", 'limit');
  }
  if (Number(raw) < 1 || Number(raw) > ACTIVITY_LOG_MAX_LIMIT) {
    throw ApiError.validation(`'limit' must be between 1 and ${ACTIVITY_LOG_MAX_LIMIT}.`, 'limit');
  }
  return Number(raw);
}

function parseDate(raw: string | undefined, name: string): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const at = /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw) ? new Date(raw) : null;
  if (!at || Number.isNaN(at.getTime())) {
    throw ApiError.validation(`'${name}' must be an ISO 8601 date or date-time.`, name);
  }
  return at;
}

const SCOPE_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** The filters of a query; 400 naming the parameter for a bad one. */
export function parseFilter(query: ActivityLogQuery): ActivityLogFilter {
  const filter: ActivityLogFilter = {};
  if (query.user !== undefined && query.user !== '') {
    if (typeof query.user !== 'string' || !isUuid(query.user))
      throw ApiError.validation("'user' must be a user's uuid.", 'user');
    filter.userUuid = query.user.toLowerCase();
  }
  const scopes = [
    ...(Array.isArray(query.scope) ? query.scope : query.scope ? [query.scope] : []),
    ...(typeof query.scopes === 'string' && query.scopes ? query.scopes.split(',') : []),
  ];
  if (scopes.length > 50) throw ApiError.validation("At most 50 'scope' values.", 'scope');
  for (const scope of scopes) {
    if (typeof scope !== 'string' || !SCOPE_NAME.test(scope))
      throw ApiError.validation("'scope' must be a scope name such as Organization or BatchExport.", 'scope');
  }
  if (scopes.length) filter.scopes = scopes;
  if (query.item_id !== undefined && query.item_id !== '') {
    if (typeof query.item_id !== 'string' || query.item_id.length > 200)
      throw ApiError.validation("'item_id' must be at most 200 characters.", 'item_id');
    filter.itemId = query.item_id;
  }
  filter.from = parseDate(query.date_from, 'date_from');
  filter.to = parseDate(query.date_to, 'date_to');
  return filter;
}

function encodeCursor(cursor: ActivityCursor): string {
  return Buffer.from(`${cursor.direction === 'before' ? 'b' : 'a'}:${cursor.atUs}:${cursor.id}`).toString(
    'base64url',
  );
}

function parseCursor(raw: string): ActivityCursor {
  const decoded =
    typeof raw === 'string' && raw.length <= 200 ? Buffer.from(raw, 'base64url').toString() : '';
  const m = /^([ab]):(-?\d{1,19}):([0-9a-f-]{36})$/.exec(decoded);
  if (!m || !isUuid(m[3])) throw ApiError.validation("'cursor' is not a cursor of this list.", 'cursor');
  return { direction: m[1] === 'b' ? 'before' : 'after', atUs: m[2], id: m[3] };
}
