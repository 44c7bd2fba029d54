import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiError } from '../../src/common/errors/api-error.js';
import { defineFeature } from '../../src/common/feature/feature.js';
import { currentManager } from '../../src/database/transactions.js';
import { FEATURES } from '../../src/features.js';
import type { CaptureEvent } from '../../src/ingest/capture-events.js';
import type { IngestEndpoint, IngestRequest, IngestSink, SinkWrite } from '../../src/ingest/ingest-sink.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

/** What the test sink saw inside the request's transaction, when its write ran. */
interface Seen {
  project: number;
  events: string[];
  /** Rows of this request's other sinks visible to its write: uncommitted, so only in the same transaction. */
  eventRows: number;
  recordings: number;
}

/**
 * A third feature's sink, declared by its manifest only (no edit of src/ingest): it takes the analytics events
 * named `audit:*`, and its write runs after the events' and recordings' writes (order 30). An `audit:fail` event
 * makes its write refuse the request (400) after the others wrote.
 */
@Injectable()
class AuditSink implements IngestSink {
  readonly seen: Seen[] = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  takes(entry: CaptureEvent, endpoint: IngestEndpoint): boolean {
    return endpoint === 'events' && String(entry.event.event).startsWith('audit:');
  }

  prepare(request: IngestRequest): Promise<SinkWrite | null> {
    const events = request.events.map((e) => String(e.event.event));
    request.events.length = 0;
    const teamId = request.project.id;
    return Promise.resolve({
      write: async () => {
        const manager = currentManager(this.dataSource);
        const [{ rows }] = (await manager.query(
          'SELECT count(*)::int AS rows FROM events WHERE team_id = $1',
          [teamId],
        )) as { rows: number }[];
        const [{ recordings }] = (await manager.query(
          'SELECT count(*)::int AS recordings FROM session_recording_snapshots WHERE team_id = $1',
          [teamId],
        )) as { recordings: number }[];
        this.seen.push({ project: teamId, events, eventRows: rows, recordings });
        if (events.includes('audit:fail')) {
          throw ApiError.validation('The audit sink refuses this request.', 'event');
        }
      },
      result: () => events.length,
    });
  }
}

@Module({ providers: [AuditSink] })
class AuditModule {}

const AUDIT_FEATURE = defineFeature({
  name: 'audit',
  load: () => Promise.resolve({ modules: [AuditModule] }),
  sinks: [{ name: 'audit', order: 30, handler: () => Promise.resolve(AuditSink) }],
});

describe('Ingestion: sinks declared by features, one transaction per request', () => {
  let t: TestApp;
  let token: string;
  let projectId: number;

  const counts = async () => {
    const [row] = (await t.dataSource.query(
      `SELECT (SELECT count(*)::int FROM events WHERE team_id = $1) AS events,
              (SELECT count(*)::int FROM session_recordings WHERE team_id = $1) AS recordings,
              (SELECT count(*)::int FROM session_recording_snapshots WHERE team_id = $1) AS snapshots,
              (SELECT count(*)::int FROM persons WHERE team_id = $1) AS persons`,
      [projectId],
    )) as { events: number; recordings: number; snapshots: number; persons: number }[];
    return row;
  };
  const batch = (events: string[]) => {
    const sessionId = `s-${randomUUID()}`;
    const at = t.clock.now().getTime();
    return {
      api_key: token,
      batch: [
        {
          event: '$pageview',
          uuid: randomUUID(),
          distinct_id: 'd-1',
          properties: { $session_id: sessionId },
        },
        {
          event: '$snapshot',
          uuid: randomUUID(),
          distinct_id: 'd-1',
          properties: {
            $session_id: sessionId,
            $snapshot_data: [{ type: 4, timestamp: at - 1000, data: { href: 'https://example.com/' } }],
          },
        },
        ...events.map((event) => ({ event, uuid: randomUUID(), distinct_id: 'd-1', properties: {} })),
      ],
    };
  };
  const sink = () => t.app.get(AuditSink);

  beforeAll(async () => {
    t = await createTestApp(
      { PUBLIC_MAX_CONCURRENT_PER_IP: '0' },
      { features: [...FEATURES, AUDIT_FEATURE] },
    );
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Sinks');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("hands a third feature's sink its events, after the events' and recordings' writes, in their transaction", async () => {
    await t.http
      .post('/batch/')
      .send(batch(['audit:login']))
      .expect(200, { status: 1 });
    // The events sink stores every event but $snapshot (the audit event too): two rows, one snapshot chunk, both
    // seen by the audit sink's write before the commit — from inside the same transaction.
    expect(sink().seen).toEqual([
      { project: projectId, events: ['audit:login'], eventRows: 2, recordings: 1 },
    ]);
    expect(await counts()).toEqual({ events: 2, recordings: 1, snapshots: 1, persons: 1 });
  });

  it('stores nothing of a request whose last sink fails after the others wrote: no event, recording or person', async () => {
    const before = await counts();
    const res = await t.http.post('/batch/').send(batch(['audit:fail']));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr: 'event' });
    // The failing write ran after the events' and recordings' writes of this request (it saw their rows)...
    expect(sink().seen[1]).toEqual({
      project: projectId,
      events: ['audit:fail'],
      eventRows: before.events + 2,
      recordings: before.snapshots + 1,
    });
    // ...and their rows were rolled back with it.
    expect(await counts()).toEqual(before);
  });

  it('gives /s/ nothing but $snapshot: the audit sink takes no event of the recordings endpoint', async () => {
    const before = await counts();
    await t.http
      .post('/s/')
      .set('Content-Type', 'application/json')
      .send(batch(['audit:login']).batch.map((e) => ({ ...e, properties: { ...e.properties, token } })))
      .expect(200);
    expect(sink().seen).toHaveLength(2);
    expect(await counts()).toEqual({
      ...before,
      recordings: before.recordings + 1,
      snapshots: before.snapshots + 1,
    });
  });
});
