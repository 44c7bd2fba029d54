import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/config.js';
import { PersonsService } from '../persons/persons.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import { RecordingVisibilityService } from '../recording-access-rules/recording-visibility.service.js';
import { SessionRecordingsService } from '../session-recordings/reads/session-recordings.service.js';
import { type EventDto, type EventListQueryDto, toEventDto } from './dto/event.dto.js';
import { type SharedEventDto, toSharedEventDto } from './dto/shared-event.dto.js';
import { eventsCutoff } from './event-partitions.js';
import { parseTime } from './event-rows.js';
import { EventsIngestionService } from './events-ingestion.service.js';
import { type EventFilters, EventsRepository } from './events.repository.js';

/** The events list counts matches up to this many; its `offset` may not go beyond it (page with `before`). */
export const EVENTS_COUNT_CAP = 10000;
/** A shared recording's events are those of its session from this long before its start to after its end. */
export const SHARED_EVENTS_MARGIN_MS = 5 * 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function text(query: Record<string, unknown>, name: string, max = 400): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw ApiError.validation(`'${name}' must be given once.`, name);
  if (value.length > max) throw ApiError.validation(`'${name}' is too long.`, name, 'max_length');
  return value;
}

function time(query: Record<string, unknown>, name: string): Date | undefined {
  const value = text(query, name);
  if (value === undefined) return undefined;
  const ms = parseTime(value);
  if (ms === null) throw ApiError.validation(`'${name}' must be an ISO 8601 date-time.`, name);
  return new Date(ms);
}

/**
 * `properties`: a JSON array of PostHog property filters `{"key", "value", "operator": "exact", "type":
 * "event"}` (an array `value` is not supported), or a JSON object of key → value; every one must equal.
 */
export function parsePropertyFilters(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw ApiError.validation("'properties' must be JSON.", 'properties');
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return value as Record<string, unknown>;
  }
  if (!Array.isArray(value))
    throw ApiError.validation("'properties' must be a JSON array or object.", 'properties');
  const out: Record<string, unknown> = {};
  for (const item of value as unknown[]) {
    const f = item as Record<string, unknown> | null;
    if (!f || typeof f !== 'object' || typeof f.key !== 'string' || !('value' in f)) {
      throw ApiError.validation('Each property filter needs a `key` and a `value`.', 'properties');
    }
    if ((f.operator ?? 'exact') !== 'exact' || (f.type ?? 'event') !== 'event' || Array.isArray(f.value)) {
      throw ApiError.validation(
        'Only exact filters on one event property value are supported (`operator: "exact"`, `type: "event"`).',
        'properties',
      );
    }
    out[f.key] = f.value;
  }
  return out;
}

/**
 * A page that may have ended before `limit` at its byte bound (EVENTS_LIST_MAX_BYTES): `nextOffset` is its first
 * event left out, so `next` continues there (`toEnvelope`).
 */
function endedEarly<T>(result: Page<T>, page: PageParams): Page<T> {
  const end = page.offset + result.items.length;
  if (result.items.length > 0 && result.items.length < page.limit && end < result.total)
    result.nextOffset = end;
  return result;
}

/** The read side of events: the list and one event, for members of the project's organization. */
@Injectable()
export class EventsService {
  private readonly maxPageBytes: number;

  constructor(
    private readonly events: EventsRepository,
    private readonly projects: ProjectsService,
    private readonly persons: PersonsService,
    private readonly ingestion: EventsIngestionService,
    private readonly clock: Clock,
    private readonly recordings: SessionRecordingsService,
    private readonly visibility: RecordingVisibilityService,
    config: AppConfig,
  ) {
    this.maxPageBytes = config.get('EVENTS_LIST_MAX_BYTES');
  }

  async list(
    principal: Principal,
    projectId: number,
    query: EventListQueryDto,
    page: PageParams,
  ): Promise<Page<EventDto>> {
    // The project and what the caller may watch of its recordings, in one statement.
    const { project, visibility } = await this.visibility.enter(principal, projectId, 'query', 'viewer');
    const q = query as Record<string, unknown>;
    if (page.offset + page.limit > EVENTS_COUNT_CAP) {
      throw ApiError.validation(
        `'offset' plus 'limit' may be at most ${EVENTS_COUNT_CAP}: page further back with 'before' (the timestamp of the last event of a page).`,
        'offset',
      );
    }
    const filters: EventFilters = {
      event: text(q, 'event', 200),
      after: time(q, 'after'),
      before: time(q, 'before'),
      sessionId: text(q, 'session_id', 70),
      properties: parsePropertyFilters(text(q, 'properties', 10000)),
      // The events of a session whose recording the access rules hide from the caller are left out.
      visibility,
    };
    const distinctId = text(q, 'distinct_id', 200);
    if (distinctId !== undefined) filters.distinctIds = [distinctId];
    const personId = text(q, 'person_id', 64);
    if (personId !== undefined) {
      const ids = await this.persons.distinctIdsOfPerson(project.id, personId);
      filters.distinctIds = filters.distinctIds ? filters.distinctIds.filter((d) => ids.includes(d)) : ids;
      if (!filters.distinctIds.length) return { items: [], total: 0 };
    }
    const cutoff = eventsCutoff(this.clock.now().getTime(), this.ingestion.retentionOf(project));
    const { rows, total } = await this.events.list(
      project.id,
      cutoff,
      filters,
      page.limit,
      page.offset,
      EVENTS_COUNT_CAP,
      this.maxPageBytes,
    );
    const persons = await this.persons.eventPersons(
      project.id,
      rows.map((r) => r.distinctId),
    );
    const items = rows.map((row) => toEventDto(row, persons.get(row.distinctId), row.propertiesTruncated));
    return endedEarly({ items, total }, page);
  }

  /**
   * The events of a shared recording's session (no API key: the share's access token is the credential), oldest
   * first, as the public share shows them (`SharedEventDto`): within the recording's time range widened by
   * SHARED_EVENTS_MARGIN_MS and the project's events retention, paged up to EVENTS_COUNT_CAP.
   */
  async sharedList(accessToken: string, page: PageParams): Promise<Page<SharedEventDto>> {
    const session = await this.recordings.sharedSession(accessToken);
    if (page.offset + page.limit > EVENTS_COUNT_CAP) {
      throw ApiError.validation(`'offset' plus 'limit' may be at most ${EVENTS_COUNT_CAP}.`, 'offset');
    }
    const project = await this.projects.findById(session.teamId);
    if (!project) throw ApiError.notFound();
    const cutoff = eventsCutoff(this.clock.now().getTime(), this.ingestion.retentionOf(project));
    const { rows, total } = await this.events.listSharedOfSession(
      project.id,
      session.sessionId,
      cutoff,
      new Date(session.startTime.getTime() - SHARED_EVENTS_MARGIN_MS),
      new Date(session.endTime.getTime() + SHARED_EVENTS_MARGIN_MS),
      page.limit,
      page.offset,
      EVENTS_COUNT_CAP,
      this.maxPageBytes,
    );
    return endedEarly({ items: rows.map(toSharedEventDto), total }, page);
  }

  async retrieve(principal: Principal, projectId: number, id: string): Promise<EventDto> {
    const { project, visibility } = await this.visibility.enter(principal, projectId, 'query', 'viewer');
    if (!UUID.test(id)) throw ApiError.notFound();
    const cutoff = eventsCutoff(this.clock.now().getTime(), this.ingestion.retentionOf(project));
    const row = await this.events.findByUuid(project.id, id.toLowerCase(), cutoff, visibility);
    if (!row) throw ApiError.notFound();
    const persons = await this.persons.eventPersons(project.id, [row.distinctId]);
    return toEventDto(row, persons.get(row.distinctId));
  }
}
