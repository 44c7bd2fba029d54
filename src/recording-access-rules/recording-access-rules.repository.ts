import { Injectable } from '@nestjs/common';
import type { Page, PageParams } from '../common/pagination/page.js';
import { RepositoryBase } from '../database/repository-base.js';
import { RecordingAccessRuleEntity } from './recording-access-rule.entity.js';

/**
 * The recording_access_rules table, owned by this module (docs/data-access.md). Queries go through TypeORM's repository; a
 * query measured hot may become plain SQL behind the same method name, pinned with `@GenerateSql`.
 */
@Injectable()
export class RecordingAccessRulesRepository extends RepositoryBase {
  /** A page of the project's recording access rules, oldest first. */
  async pageForProject(
    projectId: number,
    { limit, offset }: PageParams,
  ): Promise<Page<RecordingAccessRuleEntity>> {
    const [items, total] = await this.repository(RecordingAccessRuleEntity).findAndCount({
      where: { projectId },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /** The recording access rule when it belongs to the project. */
  findInProject(projectId: number, id: string): Promise<RecordingAccessRuleEntity | null> {
    return this.repository(RecordingAccessRuleEntity).findOne({ where: { id, projectId } });
  }

  async insert(projectId: number, name: string): Promise<RecordingAccessRuleEntity> {
    const repository = this.repository(RecordingAccessRuleEntity);
    return repository.save(repository.create({ projectId, name }), { transaction: false, reload: true });
  }

  /** Deletes the recording access rule when it belongs to the project; returns whether it did. */
  async delete(projectId: number, id: string): Promise<boolean> {
    const result = await this.repository(RecordingAccessRuleEntity).delete({ id, projectId });
    return (result.affected ?? 0) > 0;
  }
}
