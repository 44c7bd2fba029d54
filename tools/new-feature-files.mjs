// The files `npm run new:feature` writes (tools/new-feature.mjs): the names of a feature derived from its plural
// kebab-case name, and the text of each file, for a resource of an organization or of a project.
//
// Long on purpose (about 780 lines): it is the text of one working feature — entity, migration, repository,
// DTOs, service, controller, module, manifest, unit and e2e tests — each file's template beside the others it
// must agree with (the same names, columns and routes). Split by file, the templates would share those names
// through a dozen imports and a change of shape would be spread over as many files; read top to bottom it is the
// feature a team gets, in the order its layers build on each other.

/** The names of the feature `name` (`release-notes`): class, table, URL segment, scope object, constant. */
export function featureNames(name) {
  const singular = name.slice(0, -1); // release-note
  const pascal = (s) => s.replace(/(^|-)([a-z0-9])/g, (_, __, c) => c.toUpperCase());
  const snake = (s) => s.replace(/-/g, '_');
  const camel = (s) => s.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
  const Item = pascal(singular); // ReleaseNote
  const Items = pascal(name); // ReleaseNotes
  const items = camel(name); // releaseNotes
  const item = camel(singular); // releaseNote
  const table = snake(name); // release_notes
  const segment = snake(name); // URL: /api/organizations/:organization_id/release_notes
  const scope = snake(singular); // release_note:read, release_note:write
  const CONSTANT = `${snake(name).toUpperCase()}_FEATURE`;
  const words = name.replace(/-/g, ' '); // release notes
  const word = singular.replace(/-/g, ' '); // release note

  return { name, singular, Item, Items, items, item, table, segment, scope, CONSTANT, words, word };
}

/**
 * What the resource belongs to: an organization (`/api/organizations/:organization_id/<segment>`, read by any
 * member, written by admins and owners) or a project (`/api/projects/:project_id/<segment>`, read and written by
 * any member of its organization whose key reaches the project, as PostHog's project resources).
 */
export function parentOf(kind) {
  if (kind === 'project') {
    return {
      kind,
      word: 'project',
      Word: 'Project',
      key: 'projectId',
      column: 'project_id',
      param: 'project_id',
      tsType: 'number',
      columnType: 'integer',
      sqlType: 'integer',
      table: 'projects',
      Entity: 'ProjectEntity',
      entityImport: '../projects/project.entity.js',
      relation: 'project',
      route: (segment) => `/api/projects/:project_id/${segment}`,
      openapi: (segment) => `/api/projects/{project_id}/${segment}`,
    };
  }
  return {
    kind: 'organization',
    word: 'organization',
    Word: 'Organization',
    key: 'organizationId',
    column: 'organization_id',
    param: 'organization_id',
    tsType: 'string',
    columnType: 'uuid',
    sqlType: 'uuid',
    table: 'organizations',
    Entity: 'OrganizationEntity',
    entityImport: '../organizations/organization.entity.js',
    relation: 'organization',
    route: (segment) => `/api/organizations/:organization_id/${segment}`,
    openapi: (segment) => `/api/organizations/{organization_id}/${segment}`,
  };
}

/**
 * The files of the feature `name` by their path, with `timestamp` for its migration; `kind` is `organization`
 * (the default) or `project`, what the resource belongs to.
 */
export function featureFiles(name, timestamp, kind = 'organization') {
  const { singular, Item, Items, items, item, table, segment, scope, CONSTANT, words, word } =
    featureNames(name);
  const P = parentOf(kind);
  const MAX_NAME = 200;
  const migrationClass = `Create${Items}${timestamp}`;
  const pk = `${table}_pkey`;
  const fk = `${table}_${P.column}_fkey`;
  const index = `${table}_${P.word}_idx`;

  // Files ----------------------------------------------------------------------------------------------------------
  const files = {};
  const parentParam =
    P.kind === 'project'
      ? `@Param('project_id', IntIdPipe) projectId: number`
      : `@Param('organization_id', UuidPipe) organizationId: string`;

  files[`src/${name}/${singular}.entity.ts`] = `import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { ${P.Entity} } from '${P.entityImport}';

/** A ${word} of ${P.kind === 'project' ? 'a project' : 'an organization'}. */
@Entity('${table}')
@Index('${index}', ['${P.key}', 'createdAt'])
export class ${Item}Entity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: '${pk}' })
  id: string;

  @Column({ type: '${P.columnType}' })
  ${P.key}: ${P.tsType};

  @ManyToOne(() => ${P.Entity}, { onDelete: 'CASCADE' })
  @JoinColumn({ name: '${P.column}', foreignKeyConstraintName: '${fk}' })
  ${P.relation}?: ${P.Entity};

  @Column({ type: 'varchar', length: ${MAX_NAME} })
  name: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
`;

  files[`src/${name}/migrations/${timestamp}-Create${Items}.ts`] =
    `import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The ${table} table (${Item}Entity). */
export class ${migrationClass} implements MigrationInterface {
  name = '${migrationClass}';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      \`CREATE TABLE "${table}" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "${P.column}" ${P.sqlType} NOT NULL, "name" character varying(${MAX_NAME}) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "${pk}" PRIMARY KEY ("id"))\`,
    );
    await queryRunner.query(
      \`CREATE INDEX "${index}" ON "${table}" ("${P.column}", "created_at") \`,
    );
    await queryRunner.query(
      \`ALTER TABLE "${table}" ADD CONSTRAINT "${fk}" FOREIGN KEY ("${P.column}") REFERENCES "${P.table}"("id") ON DELETE CASCADE ON UPDATE NO ACTION\`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(\`ALTER TABLE "${table}" DROP CONSTRAINT "${fk}"\`);
    await queryRunner.query(\`DROP INDEX "public"."${index}"\`);
    await queryRunner.query(\`DROP TABLE "${table}"\`);
  }
}
`;

  // The repository as docs/data-access.md has it: entities through TypeORM's repository on the current manager
  // (a transaction's, when the service opened one); no row type, no mapper, no plain SQL to pin.
  files[`src/${name}/${name}.repository.ts`] = `import { Injectable } from '@nestjs/common';
import type { Page, PageParams } from '../common/pagination/page.js';
import { RepositoryBase } from '../database/repository-base.js';
import { ${Item}Entity } from './${singular}.entity.js';

/**
 * The ${table} table, owned by this module (docs/data-access.md). Queries go through TypeORM's repository; a
 * query measured hot may become plain SQL behind the same method name, pinned with \`@GenerateSql\`.
 */
@Injectable()
export class ${Items}Repository extends RepositoryBase {
  /** A page of the ${P.word}'s ${words}, oldest first. */
  async pageFor${P.Word}(${P.key}: ${P.tsType}, { limit, offset }: PageParams): Promise<Page<${Item}Entity>> {
    const [items, total] = await this.repository(${Item}Entity).findAndCount({
      where: { ${P.key} },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /** The ${word} when it belongs to the ${P.word}. */
  findIn${P.Word}(${P.key}: ${P.tsType}, id: string): Promise<${Item}Entity | null> {
    return this.repository(${Item}Entity).findOne({ where: { id, ${P.key} } });
  }

  async insert(${P.key}: ${P.tsType}, name: string): Promise<${Item}Entity> {
    const repository = this.repository(${Item}Entity);
    return repository.save(repository.create({ ${P.key}, name }), { transaction: false, reload: true });
  }

  /** Deletes the ${word} when it belongs to the ${P.word}; returns whether it did. */
  async delete(${P.key}: ${P.tsType}, id: string): Promise<boolean> {
    const result = await this.repository(${Item}Entity).delete({ id, ${P.key} });
    return (result.affected ?? 0) > 0;
  }
}
`;

  files[`src/${name}/dto/${singular}.dto.ts`] = `import { ApiProperty } from '@nestjs/swagger';
import type { ${Item}Entity } from '../${singular}.entity.js';

/** A ${word} as the API returns it. */
export class ${Item}Dto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'Example', maxLength: ${MAX_NAME} })
  name: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;
}

export function to${Item}Dto(entity: ${Item}Entity): ${Item}Dto {
  return { id: entity.id, name: entity.name, created_at: entity.createdAt.toISOString() };
}
`;

  files[`src/${name}/dto/${singular}-input.dto.ts`] = `import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

/** The body of POST: read-only fields sent are ignored. */
@ReadOnlyFields('id', 'created_at')
export class Create${Item}Dto {
  @ApiProperty({ example: 'Example', minLength: 1, maxLength: ${MAX_NAME}, description: 'Trimmed; not blank.' })
  @Trim()
  @IsString({ message: 'Must be a string.' })
  @MinLength(1, { message: 'This field may not be blank.' })
  @MaxLength(${MAX_NAME}, { message: 'Ensure this field has no more than ${MAX_NAME} characters.' })
  name: string;
}
`;

  files[`src/${name}/${name}.service.ts`] =
    P.kind === 'project'
      ? `import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { Create${Item}Dto } from './dto/${singular}-input.dto.js';
import { type ${Item}Dto, to${Item}Dto } from './dto/${singular}.dto.js';
import { ${Items}Repository } from './${name}.repository.js';

/**
 * ${Item}s of a project: any member of its organization reads, adds and deletes them, as PostHog's project
 * resources. The project is checked first: 404 outside the caller's organizations, 403 for a key restricted to
 * other projects.
 */
@Injectable()
export class ${Items}Service {
  constructor(
    private readonly ${items}: ${Items}Repository,
    private readonly projects: ProjectsService,
  ) {}

  async list(principal: Principal, projectId: number, page: PageParams): Promise<Page<${Item}Dto>> {
    const project = await this.projects.requireAccessible(principal, projectId);
    const { items, total } = await this.${items}.pageForProject(project.id, page);
    return { items: items.map(to${Item}Dto), total };
  }

  async retrieve(principal: Principal, projectId: number, id: string): Promise<${Item}Dto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    const ${item} = await this.${items}.findInProject(project.id, id);
    if (!${item}) throw ApiError.notFound();
    return to${Item}Dto(${item});
  }

  async create(principal: Principal, projectId: number, input: Create${Item}Dto): Promise<${Item}Dto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    return to${Item}Dto(await this.${items}.insert(project.id, input.name));
  }

  async delete(principal: Principal, projectId: number, id: string): Promise<void> {
    const project = await this.projects.requireAccessible(principal, projectId);
    if (!(await this.${items}.delete(project.id, id))) throw ApiError.notFound();
  }
}
`
      : `import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import type { Create${Item}Dto } from './dto/${singular}-input.dto.js';
import { type ${Item}Dto, to${Item}Dto } from './dto/${singular}.dto.js';
import { ${Items}Repository } from './${name}.repository.js';

/** ${Item}s of an organization: any member reads them; admins and owners create and delete them. */
@Injectable()
export class ${Items}Service {
  constructor(
    private readonly ${items}: ${Items}Repository,
    private readonly memberships: MembershipsService,
  ) {}

  async list(principal: Principal, organizationId: string, page: PageParams): Promise<Page<${Item}Dto>> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const { items, total } = await this.${items}.pageForOrganization(access.organizationId, page);
    return { items: items.map(to${Item}Dto), total };
  }

  async retrieve(principal: Principal, organizationId: string, id: string): Promise<${Item}Dto> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const ${item} = await this.${items}.findInOrganization(access.organizationId, id);
    if (!${item}) throw ApiError.notFound();
    return to${Item}Dto(${item});
  }

  async create(principal: Principal, organizationId: string, input: Create${Item}Dto): Promise<${Item}Dto> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    return to${Item}Dto(await this.${items}.insert(access.organizationId, input.name));
  }

  async delete(principal: Principal, organizationId: string, id: string): Promise<void> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    if (!(await this.${items}.delete(access.organizationId, id))) throw ApiError.notFound();
  }
}
`;

  const parentApiParam =
    P.kind === 'project'
      ? `@ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' })`
      : `@ApiParam({ name: 'organization_id', format: 'uuid' })`;
  const who =
    P.kind === 'project'
      ? { read: 'Any member of the project', write: 'Any member of the project' }
      : { read: 'Any member', write: 'Admins and owners' };
  files[`src/${name}/${name}.controller.ts`] =
    `import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { ${P.kind === 'project' ? 'IntIdPipe, UuidPipe' : 'UuidPipe'} } from '../common/validation/id.pipe.js';
import { Create${Item}Dto } from './dto/${singular}-input.dto.js';
import { ${Item}Dto } from './dto/${singular}.dto.js';
import { ${Items}Service } from './${name}.service.js';

@ApiTags('${segment}')
${parentApiParam}
@ApiNotFoundResponse({ description: "No such ${P.word} or ${word} among the caller's.", type: ErrorBodyDto })
@Controller('${P.route(segment).slice(1)}')
export class ${Items}Controller {
  constructor(private readonly ${items}: ${Items}Service) {}

  @Get()
  @RequireScopes('${scope}:read')
  @ApiOperation({ summary: "List a${P.kind === 'organization' ? 'n' : ''} ${P.word}'s ${words}", description: '${who.read}; oldest first.' })
  @Paginated(${Item}Dto)
  list(
    @CurrentPrincipal() principal: Principal,
    ${parentParam},
    @PageQuery() page: PageParams,
  ): Promise<Page<${Item}Dto>> {
    return this.${items}.list(principal, ${P.key}, page);
  }

  @Post()
  @RequireScopes('${scope}:write')
  @ApiOperation({ summary: 'Add a ${word}', description: '${who.write}.' })
  @ApiCreatedResponse({ type: ${Item}Dto })
  @ApiBadRequestResponse({ description: 'Invalid body: a bad value or an unknown field.', type: ErrorBodyDto })
  create(
    @CurrentPrincipal() principal: Principal,
    ${parentParam},
    @Body() body: Create${Item}Dto,
  ): Promise<${Item}Dto> {
    return this.${items}.create(principal, ${P.key}, body);
  }

  @Get(':id')
  @RequireScopes('${scope}:read')
  @ApiOperation({ summary: 'Retrieve a ${word}', description: '${who.read}.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ${Item}Dto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    ${parentParam},
    @Param('id', UuidPipe) id: string,
  ): Promise<${Item}Dto> {
    return this.${items}.retrieve(principal, ${P.key}, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('${scope}:write')
  @ApiOperation({ summary: 'Delete a ${word}', description: '${who.write}.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    ${parentParam},
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.${items}.delete(principal, ${P.key}, id);
  }
}
`;

  const parentModule =
    P.kind === 'project'
      ? { name: 'ProjectsModule', from: '../projects/projects.module.js' }
      : { name: 'MembershipsModule', from: '../memberships/memberships.module.js' };
  files[`src/${name}/${name}.module.ts`] = `import { Module } from '@nestjs/common';
import { ${parentModule.name} } from '${parentModule.from}';
import { ${Items}Controller } from './${name}.controller.js';
import { ${Items}Repository } from './${name}.repository.js';
import { ${Items}Service } from './${name}.service.js';

/** ${Item}s of a${P.kind === 'organization' ? 'n' : ''} ${P.word}. */
@Module({
  imports: [${parentModule.name}],
  controllers: [${Items}Controller],
  providers: [${Items}Repository, ${Items}Service],
  exports: [${Items}Service],
})
export class ${Items}Module {}
`;

  files[`src/${name}/${name}.feature.ts`] = `import { randomUUID } from 'node:crypto';
import { defineFeature } from '../common/feature/feature.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    ${scope}: true;
  }
}

/** A ${word} name no other test uses. */
const fixtureName = () => \`${word} \${randomUUID().slice(0, 8)}\`;

/** The ${words} feature: what it contributes to the application, the database and the tests. */
export const ${CONSTANT} = defineFeature({
  name: '${name}',
  e2e: ['${name}'],
  load: async () => ({
    modules: [(await import('./${name}.module.js')).${Items}Module],
    entities: [(await import('./${singular}.entity.js')).${Item}Entity],
    migrations: [(await import('./migrations/${timestamp}-Create${Items}.js')).${migrationClass}],
  }),
  scopes: ['${scope}'],
  testFixture: {
    async create({ request, ${P.key} }) {
      const created = await request<{ id: string }>('post', \`${P.route(segment).replace(`:${P.param}`, `\${${P.key}}`)}\`, {
        name: fixtureName(),
      });
      return { ${segment}: created.id };
    },
    bodies: { ${Items}Controller_create: () => ({ name: fixtureName() }) },
  },
  // A scheduled task, when the feature needs one: a provider of its module extending IntervalTask
  // (common/tasks/interval-task.ts; \`run\` does one tick and logs its own failures), its interval in seconds a
  // setting of ${name}.settings.ts (0 turns it off). The task runner starts it on every replica; work that one
  // replica at a time must do takes an advisory lock in \`run\`. docs/configuration.md lists it.
  // tasks: [
  //   {
  //     name: '${name}-cleanup',
  //     interval: '${table.toUpperCase()}_CLEANUP_SECONDS',
  //     description: 'Deletes the ${words} past their retention (0 turns it off).',
  //     handler: async () => (await import('./${name}-cleanup.task.js')).${Items}CleanupTask,
  //   },
  // ],
});
`;

  const parentValue = P.kind === 'project' ? '7' : "'o1'";
  files[`src/${name}/${singular}.spec.ts`] = `import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { Create${Item}Dto } from './dto/${singular}-input.dto.js';
import { to${Item}Dto } from './dto/${singular}.dto.js';

const violations = async (body: unknown) =>
  (await validate(plainToInstance(Create${Item}Dto, body))).map((e) => [e.property, Object.values(e.constraints ?? {})]);

describe('${words}', () => {
  it('answers a ${word} field by field, the date in ISO 8601', () => {
    const createdAt = new Date('2026-11-21T10:00:00.000Z');
    expect(
      to${Item}Dto({ id: 'a1', ${P.key}: ${parentValue}, name: 'Launch', createdAt }),
    ).toEqual({ id: 'a1', name: 'Launch', created_at: '2026-11-21T10:00:00.000Z' });
  });

  it('takes a trimmed name of 1 to ${MAX_NAME} characters', async () => {
    expect(await violations({ name: 'Launch' })).toEqual([]);
    expect(plainToInstance(Create${Item}Dto, { name: '  Launch \\n' }).name).toBe('Launch');
    expect(await violations({ name: 'x'.repeat(${MAX_NAME}) })).toEqual([]);
  });

  it('refuses a missing, blank, too long or non-string name, with the message the API answers', async () => {
    expect(await violations({ name: '   ' })).toEqual([['name', ['This field may not be blank.']]]);
    expect(await violations({ name: 'x'.repeat(${MAX_NAME + 1}) })).toEqual([
      ['name', ['Ensure this field has no more than ${MAX_NAME} characters.']],
    ]);
    expect((await violations({ name: 7 }))[0]).toEqual(['name', expect.arrayContaining(['Must be a string.'])]);
    expect((await violations({}))[0]?.[0]).toBe('name');
  });
});
`;

  files[`test/e2e/${name}.e2e-spec.ts`] = P.kind === 'project' ? projectE2e() : organizationE2e();
  return files;

  // The e2e spec of each kind: the same checks, with the access rules of what the resource belongs to. ----------
  function sharedTests(pathOf) {
    return `  it('ignores read-only fields sent, and refuses a bad or unknown field (400, nothing written)', async () => {
    const kept = await t.http
      .post(${pathOf}())
      .set(owner.auth)
      .send({ name: 'Read-only', id: '00000000-0000-4000-8000-000000000000' })
      .expect(201);
    expect(kept.body.id).not.toBe('00000000-0000-4000-8000-000000000000');
    const before = await rowCount();
    for (const [body, attr] of [
      [{}, 'name'],
      [{ name: ' ' }, 'name'],
      [{ name: 'x'.repeat(${MAX_NAME + 1}) }, 'name'],
      [{ name: 7 }, 'name'],
      [{ name: 'ok', colour: 'red' }, 'colour'],
    ] as const) {
      const res = await t.http.post(${pathOf}()).set(owner.auth).send(body).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', attr });
    }
    const badLimit = await t.http.get(${pathOf}()).query({ limit: 'x' }).set(owner.auth).expect(400);
    expect(badLimit.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: "'limit' must be a non-negative integer.",
      attr: 'limit',
    });
    // An id that is not a UUID is no id of any ${word}: 404, as PostHog answers.
    expect((await t.http.get(${pathOf}(undefined, '/not-a-uuid')).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect(await rowCount()).toBe(before);
  });

  it('deletes a ${word} (204, gone), then 404', async () => {
    const doomed = await create('Doomed');
    await t.http.delete(${pathOf}(undefined, \`/\${doomed.id}\`)).set(owner.auth).expect(204);
    expect(await t.dataSource.query('SELECT id FROM ${table} WHERE id = $1', [doomed.id])).toEqual([]);
    expect((await t.http.delete(${pathOf}(undefined, \`/\${doomed.id}\`)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect((await t.http.get(${pathOf}(undefined, \`/\${doomed.id}\`)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
  });

  it('answers 401 without a key and 403 for each missing scope', async () => {
    const existing = await create('Scoped');
    // A key of other scopes cannot read; a read key cannot write; a write key (which implies read) can.
    const otherScopes = await t.factories.keyFor(owner, 'organization:read,organization:write');
    const readOnly = await t.factories.keyFor(owner, '${scope}:read');
    const writeOnly = await t.factories.keyFor(owner, '${scope}:write');
    await expectScopeEnforced((h) => t.http.get(${pathOf}()).set(h), '${scope}:read', otherScopes, {
      headers: readOnly,
      status: 200,
    });
    await expectScopeEnforced((h) => t.http.get(${pathOf}(undefined, \`/\${existing.id}\`)).set(h), '${scope}:read', otherScopes, {
      headers: readOnly,
      status: 200,
    });
    await expectScopeEnforced(
      (h) => t.http.post(${pathOf}()).set(h).send({ name: 'Denied' }),
      '${scope}:write',
      readOnly,
      { headers: writeOnly, status: 201 },
    );
    await expectScopeEnforced(
      (h) => t.http.delete(${pathOf}(undefined, \`/\${existing.id}\`)).set(h),
      '${scope}:write',
      readOnly,
      { headers: writeOnly, status: 204 },
    );
  });
`;
  }

  function organizationE2e() {
    return `import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { expectScopeEnforced, INSUFFICIENT, ISO, NOT_FOUND, UUID } from '../support/expectations.js';

interface ${Item} {
  id: string;
  name: string;
  created_at: string;
}

describe('${words}', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let otherOrgId: string;

  const path = (organizationId = orgId, rest = '') => \`/api/organizations/\${organizationId}/${segment}\${rest}\`;
  const create = async (name: string, organizationId = orgId, who: TestUser = owner) =>
    (await t.http.post(path(organizationId)).set(who.auth).send({ name }).expect(201)).body as ${Item};
  const rowCount = async (): Promise<number> =>
    (await t.dataSource.query('SELECT count(*)::int AS n FROM ${table}'))[0].n;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    orgId = (await t.factories.organization(owner, '${Items}')).id;
    otherOrgId = (await t.factories.organization(stranger, 'Elsewhere')).id;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a ${word} (201, field by field, stored), retrieves it and lists it in the envelope', async () => {
    const created = await create('  First  ');
    expect(created).toEqual({ id: expect.stringMatching(UUID), name: 'First', created_at: expect.stringMatching(ISO) });
    const rows = await t.dataSource.query('SELECT organization_id, name FROM ${table} WHERE id = $1', [created.id]);
    expect(rows).toEqual([{ organization_id: orgId, name: 'First' }]);
    const second = await create('Second');

    const one = await t.http.get(path(orgId, \`/\${created.id}\`)).set(member.auth).expect(200);
    expect(one.body).toEqual(created);

    const page = await t.http.get(path()).query({ limit: 1 }).set(member.auth).expect(200);
    expect(page.body).toEqual({
      count: 2,
      next: expect.stringContaining('offset=1'),
      previous: null,
      results: [created],
    });
    const rest = await t.http.get(path()).query({ limit: 1, offset: 1 }).set(member.auth).expect(200);
    expect(rest.body).toMatchObject({ count: 2, next: null, results: [second] });
  });

${sharedTests('path')}
  it('lets a member read but not write (403), and keeps other organizations out (404)', async () => {
    const existing = await create('Members');
    const before = await rowCount();
    expect((await t.http.post(path()).set(member.auth).send({ name: 'No' }).expect(403)).body).toEqual(INSUFFICIENT);
    expect((await t.http.delete(path(orgId, \`/\${existing.id}\`)).set(member.auth).expect(403)).body).toEqual(
      INSUFFICIENT,
    );
    expect(await rowCount()).toBe(before);

    // Another organization's ${words} are not found, whether asked through it or through one's own.
    const theirs = await create('Theirs', otherOrgId, stranger);
    expect((await t.http.get(path(otherOrgId)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect((await t.http.post(path(otherOrgId)).set(owner.auth).send({ name: 'x' }).expect(404)).body).toEqual(
      NOT_FOUND,
    );
    await t.http.get(path(orgId, \`/\${theirs.id}\`)).set(owner.auth).expect(404);
    await t.http.delete(path(orgId, \`/\${theirs.id}\`)).set(owner.auth).expect(404);
    await t.http.get(path(otherOrgId, \`/\${theirs.id}\`)).set(stranger.auth).expect(200);
  });
});
`;
  }

  function projectE2e() {
    return `import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { expectScopeEnforced, ISO, NOT_FOUND, UUID } from '../support/expectations.js';

interface ${Item} {
  id: string;
  name: string;
  created_at: string;
}

describe('${words}', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let projectId: number;
  let ownersOtherProjectId: number;
  let strangersProjectId: number;

  const path = (id = projectId, rest = '') => \`/api/projects/\${id}/${segment}\${rest}\`;
  const create = async (name: string, id = projectId, who: TestUser = owner) =>
    (await t.http.post(path(id)).set(who.auth).send({ name }).expect(201)).body as ${Item};
  const rowCount = async (): Promise<number> =>
    (await t.dataSource.query('SELECT count(*)::int AS n FROM ${table}'))[0].n;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, '${Items}');
    projectId = org.teams[0].id;
    ownersOtherProjectId = (await t.factories.organization(owner, 'Another')).teams[0].id;
    strangersProjectId = (await t.factories.organization(stranger, 'Elsewhere')).teams[0].id;
    await t.factories.member(org.id, member, MembershipLevel.MEMBER);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a ${word} (201, field by field, stored), retrieves it and lists it in the envelope', async () => {
    const created = await create('  First  ');
    expect(created).toEqual({ id: expect.stringMatching(UUID), name: 'First', created_at: expect.stringMatching(ISO) });
    const rows = await t.dataSource.query('SELECT project_id, name FROM ${table} WHERE id = $1', [created.id]);
    expect(rows).toEqual([{ project_id: projectId, name: 'First' }]);
    // Any member of the project's organization adds ${words} too.
    const second = await create('Second', projectId, member);

    const one = await t.http.get(path(projectId, \`/\${created.id}\`)).set(member.auth).expect(200);
    expect(one.body).toEqual(created);

    const page = await t.http.get(path()).query({ limit: 1 }).set(member.auth).expect(200);
    expect(page.body).toEqual({
      count: 2,
      next: expect.stringContaining('offset=1'),
      previous: null,
      results: [created],
    });
    const rest = await t.http.get(path()).query({ limit: 1, offset: 1 }).set(member.auth).expect(200);
    expect(rest.body).toMatchObject({ count: 2, next: null, results: [second] });
  });

${sharedTests('path')}
  it("keeps other organizations' projects out (404) and a key restricted to another project (403)", async () => {
    const existing = await create('Mine');
    const theirs = await create('Theirs', strangersProjectId, stranger);
    const before = await rowCount();
    expect((await t.http.get(path(strangersProjectId)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect(
      (await t.http.post(path(strangersProjectId)).set(owner.auth).send({ name: 'x' }).expect(404)).body,
    ).toEqual(NOT_FOUND);
    await t.http.get(path(projectId, \`/\${theirs.id}\`)).set(owner.auth).expect(404);
    await t.http.delete(path(projectId, \`/\${theirs.id}\`)).set(owner.auth).expect(404);
    await t.http.get(path(strangersProjectId, \`/\${theirs.id}\`)).set(stranger.auth).expect(200);
    // A project id that is not one (not a positive integer) is 404 as well.
    expect((await t.http.get(path(0)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);

    const elsewhere = await t.factories.keyFor(owner, '${scope}:write', { projects: [ownersOtherProjectId] });
    for (const res of [
      await t.http.get(path()).set(elsewhere),
      await t.http.get(path(projectId, \`/\${existing.id}\`)).set(elsewhere),
      await t.http.post(path()).set(elsewhere).send({ name: 'No' }),
      await t.http.delete(path(projectId, \`/\${existing.id}\`)).set(elsewhere),
    ]) {
      expect([res.status, res.body]).toEqual([
        403,
        {
          type: 'authentication_error',
          code: 'permission_denied',
          detail: 'This API key is not allowed to access this project.',
          attr: null,
        },
      ]);
    }
    expect(await rowCount()).toBe(before);
  });
});
`;
  }
}
