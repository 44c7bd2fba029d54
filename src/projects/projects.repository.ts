import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, In } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { ProjectEntity } from './project.entity.js';

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

  findById(id: number): Promise<ProjectEntity | null> {
    return this.dataSource.getRepository(ProjectEntity).findOneBy({ id });
  }

  findByApiToken(apiToken: string): Promise<ProjectEntity | null> {
    return this.dataSource.getRepository(ProjectEntity).findOneBy({ apiToken });
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
