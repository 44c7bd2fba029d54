import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { CreateRecordingAccessRuleDto } from './dto/recording-access-rule-input.dto.js';
import { type RecordingAccessRuleDto, toRecordingAccessRuleDto } from './dto/recording-access-rule.dto.js';
import { RecordingAccessRulesRepository } from './recording-access-rules.repository.js';

/**
 * RecordingAccessRules of a project: any member of its organization reads, adds and deletes them, as PostHog's project
 * resources. The project is checked first: 404 outside the caller's organizations, 403 for a key restricted to
 * other projects.
 */
@Injectable()
export class RecordingAccessRulesService {
  constructor(
    private readonly recordingAccessRules: RecordingAccessRulesRepository,
    private readonly projects: ProjectsService,
  ) {}

  async list(
    principal: Principal,
    projectId: number,
    page: PageParams,
  ): Promise<Page<RecordingAccessRuleDto>> {
    const project = await this.projects.requireAccessible(principal, projectId);
    const { items, total } = await this.recordingAccessRules.pageForProject(project.id, page);
    return { items: items.map(toRecordingAccessRuleDto), total };
  }

  async retrieve(principal: Principal, projectId: number, id: string): Promise<RecordingAccessRuleDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    const recordingAccessRule = await this.recordingAccessRules.findInProject(project.id, id);
    if (!recordingAccessRule) throw ApiError.notFound();
    return toRecordingAccessRuleDto(recordingAccessRule);
  }

  async create(
    principal: Principal,
    projectId: number,
    input: CreateRecordingAccessRuleDto,
  ): Promise<RecordingAccessRuleDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    return toRecordingAccessRuleDto(await this.recordingAccessRules.insert(project.id, input.name));
  }

  async delete(principal: Principal, projectId: number, id: string): Promise<void> {
    const project = await this.projects.requireAccessible(principal, projectId);
    if (!(await this.recordingAccessRules.delete(project.id, id))) throw ApiError.notFound();
  }
}
