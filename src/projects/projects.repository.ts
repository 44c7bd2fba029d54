import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, In } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { ProjectEntity } from './project.entity.js';

interface ProjectRow {
  id: number;
  uuid: string;
  organization_id: string;
  name: string;
  api_token: string;
  timezone: string;
  session_recording_opt_in: boolean;
  created_at: Date;
}

function projectFromRow(row: ProjectRow): ProjectEntity {
  const project = new ProjectEntity();
  project.id = row.id;
  project.uuid = row.uuid;
  project.organizationId = row.organization_id;
  project.name = row.name;
  project.apiToken = row.api_token;
  project.timezone = row.timezone;
  project.sessionRecordingOptIn = row.session_recording_opt_in;
  project.createdAt = row.created_at;
  return project;
}

@Injectable()
export class ProjectsRepository {
  constructor(private readonly dataSource: DataSource) {}

  create(
    fields: Pick<ProjectEntity, 'organizationId' | 'name' | 'apiToken'>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ProjectEntity> {
    const repo = manager.getRepository(ProjectEntity);
    return repo.save(repo.create(fields));
  }

  /** Every project-scoped request starts here: plain SQL and a direct mapping, without the ORM's query building. */
  findById(id: number): Promise<ProjectEntity | null> {
    return this.findOneWhere('id = $1', id);
  }

  /** The project of a capture token (every capture request): plain SQL, as `findById`. */
  findByApiToken(apiToken: string): Promise<ProjectEntity | null> {
    return this.findOneWhere('api_token = $1', apiToken);
  }

  private async findOneWhere(condition: string, value: unknown): Promise<ProjectEntity | null> {
    const rows = await this.dataSource.query<ProjectRow[]>(
      'SELECT id, uuid, organization_id, name, api_token, timezone, session_recording_opt_in, created_at ' +
        `FROM projects WHERE ${condition}`,
      [value],
    );
    return rows.length ? projectFromRow(rows[0]) : null;
  }

  /**
   * Writes only the given columns, in one UPDATE, so concurrent changes of different fields never undo each
   * other. Returns the row as it is after the update, or null when it no longer exists.
   */
  async update(
    id: number,
    fields: Partial<Pick<ProjectEntity, 'name' | 'sessionRecordingOptIn'>>,
  ): Promise<ProjectEntity | null> {
    const changes = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const repo = this.dataSource.getRepository(ProjectEntity);
    if (Object.keys(changes).length) await repo.update({ id }, changes);
    return repo.findOneBy({ id });
  }

  /** Projects of an organization, by id (the first one is the default project). */
  async pageForOrganization(
    organizationId: string,
    onlyIds: readonly number[] | null,
    { limit, offset }: PageParams,
  ): Promise<Page<ProjectEntity>> {
    const [items, total] = await this.dataSource.getRepository(ProjectEntity).findAndCount({
      where: onlyIds ? { organizationId, id: In([...onlyIds]) } : { organizationId },
      order: { id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /** Which of these project ids belong to the organization. */
  async idsInOrganization(organizationId: string, ids: readonly number[]): Promise<Set<number>> {
    if (!ids.length) return new Set();
    const rows = await this.dataSource.getRepository(ProjectEntity).find({
      select: { id: true },
      where: { organizationId, id: In([...ids]) },
    });
    return new Set(rows.map((r) => r.id));
  }

  /** The organization's default project: its first. */
  findDefault(organizationId: string): Promise<ProjectEntity | null> {
    return this.dataSource
      .getRepository(ProjectEntity)
      .findOne({ where: { organizationId }, order: { id: 'ASC' } });
  }
}
