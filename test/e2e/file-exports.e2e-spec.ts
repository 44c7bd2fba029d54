/**
 * On-demand file exports (PostHog's exports API for the export models), against a real PostgreSQL and a real S3
 * server (s3rver) on loopback: the file of each model and format holds exactly the source's rows of the range,
 * downloaded through the presigned URL the content route redirects to; pages make Parquet row groups (chunked
 * reads); scopes, tenancy and members' visibility; cancel of a running export; expiry; the streamed file when no
 * object store is configured; bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parquetMetadata } from 'hyparquet';
import { FileExportsExpiry } from '../../src/batch-exports/file-exports/file-exports.expiry.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { waitFor } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  type ApiExport,
  binary,
  parseFile,
  type Row,
  seedFileExportSources,
  view,
} from '../support/file-exports.js';
import { type RunningS3rver, startS3rver } from '../support/s3rver.js';

const HOUR_MS = 3600_000;
const BUCKET = 'exports';
/** Rows per page: the files' rows are read (and Parquet row groups written) 7 at a time. */
const PAGE_SIZE = 7;
/** Exports one user may have Pending or Running in a project (FILE_EXPORT_MAX_QUEUED_PER_PROJECT). */
const MAX_QUEUED = 3;
/** Parquet's schema of a file: each column's name, type and logical type (without the root). */
const parquetColumns = (bytes: Buffer) =>
  parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
    .schema.slice(1)
    .map((c) => [c.name, c.type, c.converted_type, JSON.stringify(c.logical_type)]);

describe('file exports to the object store', () => {
  let t: TestApp;
  let owner: TestUser;
  let teamId: number;
  let s3: RunningS3rver;
  let expected: Record<string, unknown[][]>;
  const start = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 3 * HOUR_MS);
  const end = new Date(start.getTime() + 2 * HOUR_MS);
  const path = (rest = '', project = teamId) => `/api/projects/${project}/exports${rest}`;
  const body = (model: string, format: string) => ({
    export_format: format,
    export_context: { model, start_at: start.toISOString(), end_at: end.toISOString() },
  });
  const create = async (model: string, format: string, auth: Record<string, string> = owner.auth) =>
    (await t.http.post(path()).set(auth).send(body(model, format)).expect(201)).body as ApiExport;
  const retrieve = async (id: string) =>
    (
      await t.http
        .get(path(`/${id}`))
        .set(owner.auth)
        .expect(200)
    ).body as ApiExport;
  const waitEnded = (id: string) =>
    waitFor(
      async () => {
        const e = await retrieve(id);
        return ['Complete', 'Failed', 'Cancelled'].includes(e.status) ? e : undefined;
      },
      30_000,
      `export ${id} to end`,
    );
  const objects = async (prefix: string) =>
    ((await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map(
      (o) => o.Key!,
    );
  /** The file through the content route: its redirect, then the presigned URL (no credentials). */
  const download = async (id: string) => {
    const res = await t.http
      .get(path(`/${id}/content`))
      .set(owner.auth)
      .expect(302);
    const location = res.headers.location as string;
    const fetched = await fetch(location);
    expect(fetched.status).toBe(200);
    return { location, fetched, bytes: Buffer.from(await fetched.arrayBuffer()) };
  };

  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_PAGE_SIZE: String(PAGE_SIZE),
      RECORDING_S3_BUCKET: BUCKET,
      RECORDING_S3_ENDPOINT: s3.endpoint,
      FILE_EXPORT_S3_PREFIX: 'fx/',
      FILE_EXPORT_URL_TTL_SECONDS: '600',
      FILE_EXPORT_MAX_QUEUED_PER_PROJECT: String(MAX_QUEUED),
    });
    owner = await t.factories.user();
    teamId = (await t.factories.organization(owner)).teams[0].id;
    expected = await seedFileExportSources(t, teamId, start, end);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  for (const model of ['events', 'persons', 'sessions']) {
    for (const format of ['JSONLines', 'Parquet']) {
      it(`${model} as ${format}: the downloaded file holds exactly the source's rows of the range`, async () => {
        const made = await create(model, format);
        expect(made).toMatchObject({
          status: 'Pending',
          export_format: format,
          export_context: { model, start_at: start.toISOString(), end_at: end.toISOString() },
          has_content: false,
          created_by: owner.id,
          exception: null,
        });
        const done = await waitEnded(made.id);
        const { location, fetched, bytes } = await download(made.id);
        const rows = await parseFile(format, bytes);
        expect(view(model, rows)).toEqual(expected[model]);
        expect(done).toMatchObject({ status: 'Complete', has_content: true, row_count: rows.length });
        expect(done.bytes).toBe(bytes.length);
        expect(done.filename).toBe(
          `${model}-${start.toISOString().replace('.000', '')}-${end.toISOString().replace('.000', '')}.${format === 'Parquet' ? 'parquet' : 'jsonl'}`,
        );
        // A short-lived URL of the one object, which names the file for the browser.
        const url = new URL(location);
        expect(url.pathname).toMatch(new RegExp(`^/${BUCKET}/fx/${teamId}/${made.id}/`));
        expect(url.searchParams.get('X-Amz-Expires')).toBe('600');
        expect(fetched.headers.get('content-disposition')).toBe(`attachment; filename="${done.filename}"`);
        if (format === 'Parquet') {
          // One row group per page read: the rows were read and written in chunks.
          const file = bytes.buffer.slice(
            bytes.byteOffset,
            bytes.byteOffset + bytes.byteLength,
          ) as ArrayBuffer;
          expect(parquetMetadata(file).row_groups.length).toBe(Math.ceil(rows.length / PAGE_SIZE));
        }
      }, 60_000);
    }
  }

  it('the environment path serves the same exports', async () => {
    const made = await create('persons', 'JSONLines');
    const res = await t.http
      .get(`/api/environments/${teamId}/exports/${made.id}`)
      .set(owner.auth)
      .expect(200);
    expect(res.body).toMatchObject({ id: made.id, export_context: { model: 'persons' } });
    await waitEnded(made.id);
  });

  it('scopes: a key without export:write cannot create, one without export:read cannot list (403)', async () => {
    const readOnly = await t.factories.keyFor(owner, 'export:read');
    const res = await t.http.post(path()).set(readOnly).send(body('events', 'JSONLines')).expect(403);
    expect(res.body).toMatchObject({ code: 'permission_denied', attr: null });
    const noExport = await t.factories.keyFor(owner, 'batch_export:read,batch_export:write');
    await t.http.get(path()).set(noExport).expect(403);
    await t.http.get(path()).set(readOnly).expect(200);
  });

  it("tenancy: another organization's project and its exports are not found (404)", async () => {
    const stranger = await t.factories.user();
    const theirTeam = (await t.factories.organization(stranger)).teams[0].id;
    const mine = await create('events', 'JSONLines');
    await t.http.get(path('', theirTeam)).set(owner.auth).expect(404);
    await t.http
      .get(path(`/${mine.id}`))
      .set(stranger.auth)
      .expect(404);
    await t.http
      .get(path(`/${mine.id}`, theirTeam))
      .set(stranger.auth)
      .expect(404);
    await t.http
      .get(path(`/${mine.id}/content`))
      .set(stranger.auth)
      .expect(404);
    await waitEnded(mine.id);
  });

  it("a member's batch_export level decides: none hides the exports (404), viewer reads them but creates none (403)", async () => {
    const [{ organization_id: orgId }] = (await t.dataSource.query(
      'SELECT organization_id FROM projects WHERE id = $1',
      [teamId],
    )) as { organization_id: string }[];
    const member = await t.factories.user();
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    const [{ id: membershipId }] = (await t.dataSource.query(
      'SELECT id FROM organization_memberships WHERE organization_id = $1 AND user_id = $2',
      [orgId, member.id],
    )) as { id: string }[];
    // A level is set (200) or removed (204, back to the default: editor).
    const level = async (access_level: string | null) => {
      const res = await t.http
        .put(`/api/projects/${teamId}/resource_access_controls`)
        .set(owner.auth)
        .send({ resource: 'batch_export', organization_member: membershipId, access_level });
      expect(res.status).toBe(access_level === null ? 204 : 200);
    };
    const made = await create('sessions', 'JSONLines');
    await waitEnded(made.id);
    try {
      await level('none');
      await t.http.get(path()).set(member.auth).expect(404);
      await t.http
        .get(path(`/${made.id}`))
        .set(member.auth)
        .expect(404);
      await t.http
        .get(path(`/${made.id}/content`))
        .set(member.auth)
        .expect(404);
      await level('viewer');
      const listed = (await t.http.get(path('?limit=100')).set(member.auth).expect(200)).body as {
        results: ApiExport[];
      };
      expect(listed.results.map((e) => e.id)).toContain(made.id);
      await t.http
        .get(path(`/${made.id}`))
        .set(member.auth)
        .expect(200);
      await t.http
        .get(path(`/${made.id}/content`))
        .set(member.auth)
        .expect(302);
      const refused = await t.http.post(path()).set(member.auth).send(body('events', 'Parquet')).expect(403);
      expect(refused.body).toMatchObject({ code: 'permission_denied' });
      await t.http
        .post(path(`/${made.id}/cancel`))
        .set(member.auth)
        .expect(403);
      await level(null);
      // At the default level (editor) the member may create.
      const mine = await create('sessions', 'Parquet', member.auth);
      expect(mine.created_by).toBe(member.id);
      await waitEnded(mine.id);
    } finally {
      await level(null);
    }
  });

  it('a sessions or events export made by another user is not downloaded by a member the recording access rules restrict (403)', async () => {
    const [{ organization_id: orgId }] = (await t.dataSource.query(
      'SELECT organization_id FROM projects WHERE id = $1',
      [teamId],
    )) as { organization_id: string }[];
    const member = await t.factories.user();
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    const ownSessions = await create('sessions', 'JSONLines');
    const ownPersons = await create('persons', 'JSONLines');
    await waitEnded(ownSessions.id);
    await waitEnded(ownPersons.id);
    // Unrestricted so far: the owner's export is the member's to download.
    await t.http
      .get(path(`/${ownSessions.id}/content`))
      .set(member.auth)
      .expect(302);
    const roleId = (
      await t.http
        .post(`/api/organizations/${orgId}/roles`)
        .set(owner.auth)
        .send({ name: 'Billing' })
        .expect(201)
    ).body.id as string;
    const rule = (
      await t.http
        .post(`/api/projects/${teamId}/recording_access_rules`)
        .set(owner.auth)
        .send({ kind: 'start_url', url_pattern: 'https://*', role_ids: [roleId] })
        .expect(201)
    ).body as { id: string };
    try {
      const refused = await t.http
        .get(path(`/${ownSessions.id}/content`))
        .set(member.auth)
        .expect(403);
      expect(refused.body).toMatchObject({ type: 'authentication_error', code: 'permission_denied' });
      expect(refused.body.detail).toContain('recording access rules');
      // Its metadata stays visible; persons hold no recordings; the owner (an admin) is not restricted.
      await t.http
        .get(path(`/${ownSessions.id}`))
        .set(member.auth)
        .expect(200);
      await t.http
        .get(path(`/${ownPersons.id}/content`))
        .set(member.auth)
        .expect(302);
      await t.http
        .get(path(`/${ownSessions.id}/content`))
        .set(owner.auth)
        .expect(302);
      // The member's own export is read with its own visibility: the hidden recordings are left out (every one here).
      const mine = await create('sessions', 'JSONLines', member.auth);
      await waitEnded(mine.id);
      const [theirs, own] = [await retrieve(ownSessions.id), await retrieve(mine.id)];
      expect(theirs.row_count).toBeGreaterThan(0);
      expect(own.row_count).toBe(0);
      await t.http
        .get(path(`/${mine.id}/content`))
        .set(member.auth)
        .expect(302);
    } finally {
      await t.http
        .delete(`/api/projects/${teamId}/recording_access_rules/${rule.id}`)
        .set(owner.auth)
        .expect(204);
    }
  });

  it('cancel stops a running export: Cancelled, nothing stored, no content; an ended export is not cancelled (409)', async () => {
    // The source is locked: the worker holds the export Running, waiting for its first page.
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    await runner.query('BEGIN');
    await runner.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    let made: ApiExport;
    try {
      made = await create('events', 'Parquet');
      await waitFor(
        async () => ((await retrieve(made.id)).status === 'Running' ? true : undefined),
        20_000,
        'the export to run',
      );
      const cancelled = await t.http
        .post(path(`/${made.id}/cancel`))
        .set(owner.auth)
        .expect(200);
      expect(cancelled.body).toMatchObject({ id: made.id, status: 'Cancelled', has_content: false });
    } finally {
      await runner.query('COMMIT');
      await runner.release();
    }
    // The worker takes its first page, sees the cancel and ends the job.
    await waitFor(
      async () => {
        const [job] = (await t.dataSource.query('SELECT state FROM pgboss.job WHERE id = $1', [made.id])) as {
          state: string;
        }[];
        return job?.state === 'completed' ? true : undefined;
      },
      20_000,
      'the job to complete',
    );
    expect(await retrieve(made.id)).toMatchObject({ status: 'Cancelled', row_count: null, bytes: null });
    expect(await objects(`fx/${teamId}/${made.id}/`)).toEqual([]);
    const content = await t.http
      .get(path(`/${made.id}/content`))
      .set(owner.auth)
      .expect(409);
    expect(content.body).toMatchObject({ code: 'conflict', attr: null });
    expect(content.body.detail).toContain('Cancelled');
    const again = await t.http
      .post(path(`/${made.id}/cancel`))
      .set(owner.auth)
      .expect(409);
    expect(again.body.detail).toContain('Cancelled');
  }, 60_000);

  it("a range without rows: an empty JSON Lines file, a Parquet file with the model's columns and no rows", async () => {
    // Two days before the seeded range: nothing of any model.
    const emptyStart = new Date(start.getTime() - 48 * HOUR_MS);
    const emptyEnd = new Date(emptyStart.getTime() + HOUR_MS);
    for (const model of ['events', 'persons', 'sessions']) {
      // The columns of the same model's file with rows.
      const full = await create(model, 'Parquet');
      await waitEnded(full.id);
      const columns = parquetColumns((await download(full.id)).bytes);
      expect(columns.length).toBeGreaterThan(2);
      for (const format of ['JSONLines', 'Parquet']) {
        const made = (
          await t.http
            .post(path())
            .set(owner.auth)
            .send({
              export_format: format,
              export_context: { model, start_at: emptyStart.toISOString(), end_at: emptyEnd.toISOString() },
            })
            .expect(201)
        ).body as ApiExport;
        const done = await waitEnded(made.id);
        expect(done).toMatchObject({ status: 'Complete', has_content: true, row_count: 0, exception: null });
        const { bytes, fetched } = await download(made.id);
        expect(fetched.headers.get('content-disposition')).toBe(`attachment; filename="${done.filename}"`);
        expect(done.bytes).toBe(bytes.length);
        expect(await objects(`fx/${teamId}/${made.id}/`)).toHaveLength(1);
        if (format === 'JSONLines') {
          expect(bytes.length).toBe(0);
          continue;
        }
        // A whole Parquet file (magic at both ends) that a reader opens: no row groups, no rows, the columns.
        expect([bytes.subarray(0, 4).toString(), bytes.subarray(-4).toString()]).toEqual(['PAR1', 'PAR1']);
        const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
        const metadata = parquetMetadata(file);
        expect([metadata.num_rows, metadata.row_groups.length]).toEqual([0n, 0]);
        expect(parquetColumns(bytes)).toEqual(columns);
        expect(await parseFile(format, bytes)).toEqual([]);
      }
    }
  }, 120_000);

  it(`a user may have ${MAX_QUEUED} exports Pending or Running in a project (FILE_EXPORT_MAX_QUEUED_PER_PROJECT): one more is 429`, async () => {
    const [{ organization_id: orgId }] = (await t.dataSource.query(
      'SELECT organization_id FROM projects WHERE id = $1',
      [teamId],
    )) as { organization_id: string }[];
    const member = await t.factories.user();
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    // The source is locked: the first export stays Running, the others Pending.
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    await runner.query('BEGIN');
    await runner.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    const made: ApiExport[] = [];
    try {
      for (let i = 0; i < MAX_QUEUED; i++) made.push(await create('events', 'JSONLines'));
      const refused = await t.http.post(path()).set(owner.auth).send(body('events', 'Parquet')).expect(429);
      expect(refused.body).toEqual({
        type: 'throttled_error',
        code: 'throttled',
        detail:
          `You already have ${MAX_QUEUED} file exports Pending or Running in this project (at most ${MAX_QUEUED}, ` +
          'FILE_EXPORT_MAX_QUEUED_PER_PROJECT). Wait for one to end, or cancel one, before requesting another.',
        attr: null,
      });
      expect(refused.headers['retry-after']).toBe('30');
      // Another member has a queue of their own; concurrent requests do not pass the cap together.
      // (One more than the cap: more concurrent requests than the API's share of the test's small pool would
      // wait for connections, not for the cap.)
      const racing = await Promise.all(
        Array.from({ length: MAX_QUEUED + 1 }, () =>
          t.http.post(path()).set(member.auth).send(body('persons', 'JSONLines')),
        ),
      );
      expect(racing.map((r) => r.status).sort()).toEqual([...Array<number>(MAX_QUEUED).fill(201), 429]);
      made.push(...racing.filter((r) => r.status === 201).map((r) => r.body as ApiExport));
      // An export that ends (here cancelled) frees its place.
      await t.http
        .post(path(`/${made[MAX_QUEUED - 1].id}/cancel`))
        .set(owner.auth)
        .expect(200);
      made.push(await create('events', 'JSONLines'));
      await t.http.post(path()).set(owner.auth).send(body('events', 'JSONLines')).expect(429);
      // Nothing refused was stored.
      const [{ count }] = (await t.dataSource.query(
        `SELECT count(*)::int AS count FROM file_exports WHERE team_id = $1 AND status IN ('Pending', 'Running')`,
        [teamId],
      )) as { count: number }[];
      expect(count).toBe(2 * MAX_QUEUED);
    } finally {
      await runner.query('COMMIT');
      await runner.release();
      // Every export ends, so the later tests find the queue empty.
      for (const e of made) await waitEnded(e.id);
    }
  }, 90_000);

  it('expiry: past expires_after the content is gone (409), then the task removes the objects and the rows', async () => {
    const made = await create('persons', 'Parquet');
    await waitEnded(made.id);
    const key = (await objects(`fx/${teamId}/${made.id}/`))[0];
    expect(key).toMatch(/\.parquet$/);
    const expiresAt = new Date((await retrieve(made.id)).expires_after);
    expect(expiresAt.getTime() - t.clock.now().getTime()).toBe(24 * HOUR_MS);
    const before = t.clock.now();
    try {
      t.clock.set(new Date(expiresAt.getTime() + 1000));
      expect(await retrieve(made.id)).toMatchObject({ status: 'Complete', has_content: false });
      const content = await t.http
        .get(path(`/${made.id}/content`))
        .set(owner.auth)
        .expect(409);
      expect(content.body.detail).toContain('expired');
      const removed = await t.app.get(FileExportsExpiry).expire(t.clock.now());
      expect(removed).toBeGreaterThanOrEqual(1);
      await t.http
        .get(path(`/${made.id}`))
        .set(owner.auth)
        .expect(404);
      expect(await objects(`fx/${teamId}/`)).toEqual([]);
    } finally {
      t.clock.set(before);
    }
  }, 60_000);

  it('bad input answers 400 in the documented error body', async () => {
    const bad = async (payload: object) =>
      (await t.http.post(path()).set(owner.auth).send(payload).expect(400)).body as Row;
    const context = body('events', 'JSONLines').export_context;
    expect(await bad({ ...body('events', 'CSV') })).toMatchObject({
      type: 'validation_error',
      attr: 'export_format',
    });
    expect(
      await bad({ export_format: 'Parquet', export_context: { ...context, model: 'groups' } }),
    ).toMatchObject({ type: 'validation_error', attr: 'export_context__model' });
    expect(
      await bad({
        export_format: 'Parquet',
        export_context: { ...context, start_at: '2026-01-01T00:00:00' },
      }),
    ).toMatchObject({ type: 'validation_error', attr: 'export_context__start_at' });
    expect(
      await bad({ export_format: 'Parquet', export_context: { ...context, end_at: context.start_at } }),
    ).toMatchObject({
      type: 'validation_error',
      attr: 'export_context__end_at',
      detail: 'Must be after start_at.',
    });
    expect(
      await bad({
        export_format: 'Parquet',
        export_context: { ...context, start_at: '2020-01-01T00:00:00Z' },
      }),
    ).toMatchObject({ attr: 'export_context__end_at', detail: 'The range may cover at most 366 days.' });
    expect(await bad({ export_format: 'Parquet' })).toMatchObject({ attr: 'export_context' });
    expect(await bad({ ...body('events', 'Parquet'), insight: 3 })).toMatchObject({ attr: 'insight' });
    await t.http.get(path('/not-a-uuid')).set(owner.auth).expect(404);
  });
});

describe('file exports without an object store: streamed by the service', () => {
  let t: TestApp;
  let owner: TestUser;
  let teamId: number;
  let expected: Record<string, unknown[][]>;
  const start = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 3 * HOUR_MS);
  const end = new Date(start.getTime() + 2 * HOUR_MS);
  const path = (rest = '') => `/api/projects/${teamId}/exports${rest}`;

  beforeAll(async () => {
    t = await createTestApp({ BATCH_EXPORT_WORKERS: 'true', BATCH_EXPORT_PAGE_SIZE: String(PAGE_SIZE) });
    owner = await t.factories.user();
    teamId = (await t.factories.organization(owner)).teams[0].id;
    expected = await seedFileExportSources(t, teamId, start, end);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it("a range without rows streams an empty JSON Lines file, and a Parquet file with the model's columns and no rows", async () => {
    const emptyStart = new Date(start.getTime() - 48 * HOUR_MS);
    const stream = async (format: string, from: Date, to: Date) => {
      const made = (
        await t.http
          .post(path())
          .set(owner.auth)
          .send({
            export_format: format,
            export_context: { model: 'sessions', start_at: from.toISOString(), end_at: to.toISOString() },
          })
          .expect(201)
      ).body as ApiExport;
      return (
        await t.http
          .get(path(`/${made.id}/content`))
          .set(owner.auth)
          .buffer(true)
          .parse(binary)
          .expect(200)
      ).body as Buffer;
    };
    const emptyEnd = new Date(emptyStart.getTime() + HOUR_MS);
    expect((await stream('JSONLines', emptyStart, emptyEnd)).length).toBe(0);
    const empty = await stream('Parquet', emptyStart, emptyEnd);
    const file = empty.buffer.slice(empty.byteOffset, empty.byteOffset + empty.byteLength) as ArrayBuffer;
    expect(parquetMetadata(file).num_rows).toBe(0n);
    expect(await parseFile('Parquet', empty)).toEqual([]);
    expect(parquetColumns(empty)).toEqual(parquetColumns(await stream('Parquet', start, end)));
  }, 60_000);

  for (const model of ['events', 'persons', 'sessions']) {
    for (const format of ['JSONLines', 'Parquet']) {
      it(`${model} as ${format}: Complete at once, the content route streams exactly the source's rows`, async () => {
        const made = (
          await t.http
            .post(path())
            .set(owner.auth)
            .send({
              export_format: format,
              export_context: { model, start_at: start.toISOString(), end_at: end.toISOString() },
            })
            .expect(201)
        ).body as ApiExport;
        expect(made).toMatchObject({ status: 'Complete', has_content: true, row_count: null, bytes: null });
        const res = await t.http
          .get(path(`/${made.id}/content`))
          .set(owner.auth)
          .buffer(true)
          .parse(binary)
          .expect(200);
        expect(res.headers['content-type']).toMatch(
          format === 'Parquet' ? /^application\/vnd\.apache\.parquet/ : /^application\/jsonl/,
        );
        expect(res.headers['content-disposition']).toBe(`attachment; filename="${made.filename}"`);
        const rows = await parseFile(format, res.body as Buffer);
        expect(view(model, rows)).toEqual(expected[model]);
        const cancel = await t.http
          .post(path(`/${made.id}/cancel`))
          .set(owner.auth)
          .expect(409);
        expect(cancel.body.detail).toContain('Complete');
      }, 60_000);
    }
  }
});
