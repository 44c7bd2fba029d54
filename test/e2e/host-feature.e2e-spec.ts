import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Body,
  Controller,
  Get,
  Injectable,
  Module,
  NotFoundException,
  Param,
  ParseIntPipe,
  Post,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsString, MaxLength } from 'class-validator';
import {
  Column,
  DataSource,
  Entity,
  type MigrationInterface,
  PrimaryGeneratedColumn,
  type QueryRunner,
} from 'typeorm';
import { RequireScopes } from '../../src/common/auth/auth.decorators.js';
import { KNOWN_SCOPES } from '../../src/common/auth/scopes.js';
import { defineFeature } from '../../src/common/feature/feature.js';
import { IntervalTask } from '../../src/common/tasks/interval-task.js';
import { ConfigError, int, setting } from '../../src/config/config.js';
import { FEATURES } from '../../src/features.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

/*
 * A host application's own feature, served beside the service's through `[...FEATURES, HOST_NOTES]`: its entity
 * and migration reach the data source, its scope the vocabulary, its route the global guard, without editing
 * any file of the service.
 */
declare module '../../src/common/auth/scopes.js' {
  interface ScopeObjects {
    host_note: true;
  }
}

@Entity('host_notes')
class HostNoteEntity {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'text' })
  text!: string;
}

class HostNotes1899999999999 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE "host_notes" ("id" SERIAL PRIMARY KEY, "text" text NOT NULL)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "host_notes"');
  }
}

class CreateHostNoteDto {
  @IsString()
  @MaxLength(100)
  text!: string;
}

@Controller('api/host_notes')
class HostNotesController {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  @Post()
  @RequireScopes('host_note:write')
  async create(@Body() body: CreateHostNoteDto): Promise<{ id: number; text: string }> {
    const note = await this.db.getRepository(HostNoteEntity).save({ text: body.text });
    return { id: note.id, text: note.text };
  }

  @Get(':id')
  @RequireScopes('host_note:read')
  async get(@Param('id', ParseIntPipe) id: number): Promise<{ id: number; text: string }> {
    const note = await this.db.getRepository(HostNoteEntity).findOneBy({ id });
    if (!note) throw new NotFoundException();
    return { id: note.id, text: note.text };
  }
}

/** The handler of the host's scheduled task: each tick counts the notes, and the tick is remembered. */
@Injectable()
class HostNotesCounter extends IntervalTask {
  static readonly ticks: number[] = [];

  constructor(@InjectDataSource() private readonly db: DataSource) {
    super();
  }

  protected async run(): Promise<void> {
    HostNotesCounter.ticks.push(await this.db.getRepository(HostNoteEntity).count());
  }
}

@Module({ controllers: [HostNotesController], providers: [HostNotesCounter] })
class HostNotesModule {}

const HOST_NOTES = defineFeature({
  name: 'host-notes',
  load: async () => ({
    modules: [HostNotesModule],
    entities: [HostNoteEntity],
    migrations: [HostNotes1899999999999],
  }),
  scopes: ['host_note'],
  settings: {
    HOST_NOTES_COUNT_SECONDS: setting(int(0, 3600), 0, 'Seconds between two counts of the notes (0: none).'),
  },
  tasks: [
    {
      name: 'host-notes-count',
      interval: 'HOST_NOTES_COUNT_SECONDS',
      description: 'Counts the notes.',
      handler: async () => HostNotesCounter,
      atBoot: true,
    },
  ],
});

describe('a host application adds its own feature', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Its routes are not in this service's openapi.json: the host documents them in its own.
    t = await createTestApp({}, { features: [...FEATURES, HOST_NOTES], contract: false });
  });
  afterAll(() => t.close());

  it('adds its scope to the vocabulary, after the service’s own', () => {
    expect(KNOWN_SCOPES).toContain('host_note:read');
    expect(KNOWN_SCOPES).toContain('host_note:write');
    expect(KNOWN_SCOPES).toContain('organization:read');
  });

  it('serves its scoped route with a real key and stores through its migrated entity', async () => {
    const writer = await t.factories.user({ scopes: 'host_note:write' });
    const created = await t.http.post('/api/host_notes').set(writer.auth).send({ text: 'hello' }).expect(201);
    expect(created.body).toEqual({ id: expect.any(Number), text: 'hello' });
    const read = await t.http.get(`/api/host_notes/${created.body.id}`).set(writer.auth).expect(200);
    expect(read.body).toEqual({ id: created.body.id, text: 'hello' });
    const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM host_notes');
    expect(n).toBe(1);
  });

  it('refuses a key without its scope (403 naming it), a read key to write, and no key at all', async () => {
    const other = await t.factories.user({ scopes: 'organization:read' });
    const denied = await t.http.get('/api/host_notes/1').set(other.auth).expect(403);
    expect(denied.body).toMatchObject({ code: 'permission_denied' });
    expect(denied.body.detail).toContain('host_note:read');
    const reader = await t.factories.keyFor(other, 'host_note:read');
    await t.http.post('/api/host_notes').set(reader).send({ text: 'x' }).expect(403);
    await t.http.get('/api/host_notes/999999').set(reader).expect(404);
    await t.http.get('/api/host_notes/1').expect(401);
  });

  it('validates its body through the global pipe (400 in the error body)', async () => {
    const writer = await t.factories.user({ scopes: 'host_note:write' });
    const res = await t.http.post('/api/host_notes').set(writer.auth).send({ text: 7 }).expect(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr: 'text' });
  });

  it('runs its declared task on the interval of its own setting, and no longer once the app is closed', async () => {
    // The tests' default: the service's own timers are off, and so is the host's (its setting's default is 0).
    expect(t.app.get(SchedulerRegistry).getIntervals()).toEqual([]);
    expect(HostNotesCounter.ticks).toEqual([]);
    const timed = await createTestApp(
      { HOST_NOTES_COUNT_SECONDS: '1' },
      { features: [...FEATURES, HOST_NOTES], contract: false, databaseUrl: t.databaseUrl },
    );
    let closed = false;
    try {
      expect(timed.app.get(SchedulerRegistry).getIntervals()).toEqual(['host-notes-count']);
      const [{ n }] = await timed.dataSource.query('SELECT count(*)::int AS n FROM host_notes');
      // The tick at boot, then the interval's.
      const deadline = Date.now() + 10_000;
      while (HostNotesCounter.ticks.length < 3 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(HostNotesCounter.ticks.slice(0, 3)).toEqual([n, n, n]);
      await timed.close();
      closed = true;
      const after = HostNotesCounter.ticks.length;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(HostNotesCounter.ticks.length).toBe(after);
    } finally {
      if (!closed) await timed.close();
    }
  });

  it('parses its settings with the service’s, reporting a bad value with the others', async () => {
    const booting = createTestApp(
      { HOST_NOTES_COUNT_SECONDS: 'soon', PORT: 'x' },
      { features: [...FEATURES, HOST_NOTES], contract: false, databaseUrl: t.databaseUrl },
    );
    await expect(booting).rejects.toThrow(ConfigError);
    await expect(booting).rejects.toThrow(
      /HOST_NOTES_COUNT_SECONDS="soon" is invalid[\s\S]*PORT="x"|PORT="x"[\s\S]*HOST_NOTES_COUNT_SECONDS="soon"/,
    );
  });

  it('fails the contract check on a served route missing from openapi.json, not skipping it', async () => {
    const checked = await createTestApp(
      {},
      { features: [...FEATURES, HOST_NOTES], databaseUrl: t.databaseUrl },
    );
    try {
      const writer = await checked.factories.user({ scopes: 'host_note:read' });
      await checked.http.get('/api/host_notes/999999').set(writer.auth).expect(404);
      await checked.http.get('/api/no_such_route').set(writer.auth).expect(404);
      expect(() => checked.contract.assertClean()).toThrow(
        'GET /api/host_notes/:id is served but missing from openapi/openapi.json',
      );
      expect(checked.contract.violations).toHaveLength(1);
    } finally {
      checked.contract.violations.length = 0;
      await checked.close();
    }
  });
});
