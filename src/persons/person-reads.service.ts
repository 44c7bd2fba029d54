import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { parsePropertyFilterList } from '../common/filters/property-filters.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { AppConfig } from '../config/config.js';
import { ProjectsService } from '../projects/projects.service.js';
import { DISTINCT_ID_MAX_LENGTH } from './person-distinct-id.entity.js';
import { type PersonDetailDto, type PersonListQueryDto, toPersonDetailDto } from './dto/person-detail.dto.js';
import { type PersonFilters, PersonsRepository } from './persons.repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Most uuids of the `uuid` filter. */
export const MAX_UUID_FILTER = 100;
/** Longest `properties` parameter (JSON text). */
const MAX_PROPERTIES_LENGTH = 8192;

function text(query: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw ApiError.validation(`'${name}' must be given once.`, name);
  if (value.length > max) {
    throw ApiError.validation(`'${name}' must have at most ${max} characters.`, name, 'max_length');
  }
  return value;
}

/**
 * The persons list's filters from its query string (PostHog's `PersonFilter`): `distinct_id`, `email`, `uuid`
 * (comma-separated), `search`, and `properties`, a JSON array of person property filters. A bad one is 400
 * naming it.
 */
export function parsePersonFilters(query: Record<string, unknown>): PersonFilters {
  const filters: PersonFilters = {
    distinctId: text(query, 'distinct_id', DISTINCT_ID_MAX_LENGTH),
    email: text(query, 'email', 1000),
    search: text(query, 'search', 200),
  };
  const uuids = text(query, 'uuid', MAX_UUID_FILTER * 37);
  if (uuids !== undefined) {
    const list = uuids.split(',').map((u) => u.trim());
    if (list.length > MAX_UUID_FILTER || !list.every((u) => UUID.test(u))) {
      throw ApiError.validation(`'uuid' must be 1 to ${MAX_UUID_FILTER} comma-separated uuids.`, 'uuid');
    }
    filters.uuids = list.map((u) => u.toLowerCase());
  }
  const properties = text(query, 'properties', MAX_PROPERTIES_LENGTH);
  if (properties !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(properties);
    } catch {
      throw ApiError.validation("'properties' must be a JSON array of property filters.", 'properties');
    }
    if (!Array.isArray(parsed)) {
      throw ApiError.validation("'properties' must be a JSON array of property filters.", 'properties');
    }
    filters.properties = parsePropertyFilterList(parsed, 'properties', 'person');
  }
  return filters;
}

/**
 * The persons API (`/api/projects/:project_id/persons/`): the persons of a project the caller may access, listed
 * newest first in pages bounded in rows and in bytes (PERSONS_LIST_MAX_BYTES), or one by id or uuid.
 */
@Injectable()
export class PersonReadsService {
  private readonly maxPageBytes: number;

  constructor(
    private readonly persons: PersonsRepository,
    private readonly projects: ProjectsService,
    config: AppConfig,
  ) {
    this.maxPageBytes = config.get('PERSONS_LIST_MAX_BYTES');
  }

  async list(
    principal: Principal,
    projectId: number,
    query: PersonListQueryDto,
    page: PageParams,
  ): Promise<Page<PersonDetailDto>> {
    const project = await this.projects.requireResourceProject(principal, projectId, 'query', 'viewer');
    const filters = parsePersonFilters(query as Record<string, unknown>);
    const { rows, total } = await this.persons.list(
      project.id,
      filters,
      page.limit,
      page.offset,
      this.maxPageBytes,
    );
    const result: Page<PersonDetailDto> = { items: rows.map(toPersonDetailDto), total };
    const end = page.offset + rows.length;
    if (rows.length > 0 && rows.length < page.limit && end < total) result.nextOffset = end;
    return result;
  }

  async retrieve(principal: Principal, projectId: number, id: string): Promise<PersonDetailDto> {
    const project = await this.projects.requireResourceProject(principal, projectId, 'query', 'viewer');
    if (!/^\d{1,9}$/.test(id) && !UUID.test(id)) throw ApiError.notFound();
    const person = await this.persons.findRecord(project.id, id);
    if (!person) throw ApiError.notFound();
    return toPersonDetailDto(person);
  }
}
