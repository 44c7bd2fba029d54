import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli-dispatch.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { readAllSnapshots } from '../support/recordings.js';

describe('CLI demo', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;

  const cli = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(
      argv,
      { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out, err };
  };

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    projectId = (await t.factories.organization(owner, 'Demo')).teams[0].id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('fills a project with recordings through capture, visible in the API', async () => {
    const result = await cli(['demo', '--project', String(projectId), '--sessions', '7', '--seed', '3']);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out).toEqual([
      expect.stringMatching(
        new RegExp(
          `^created 7 recordings \\(\\d+ rrweb events, \\d+ capture requests\\) in project ${projectId} `,
        ),
      ),
    ]);
    const list = await t.http
      .get(`/api/projects/${projectId}/session_recordings/`)
      .set(owner.auth)
      .expect(200);
    expect(list.body.count).toBe(7);
    const recordings = list.body.results as {
      id: string;
      click_count: number;
      start_url: string;
      recording_duration: number;
      active_seconds: number;
      person: { name: string; properties: Record<string, unknown> };
    }[];
    for (const r of recordings) {
      expect(r.start_url).toMatch(/^https:\/\/shop\.example\.com\//);
      expect(r.recording_duration).toBeGreaterThan(r.active_seconds);
    }
    const names = new Set(recordings.map((r) => r.person.name));
    expect(names).toContain('ada@example.com');
    expect(names).toContain('Katherine Johnson');
    expect(names).toContain('demo-anonymous-7f3a');
    const ada = recordings.find((r) => r.person.name === 'ada@example.com');
    expect(ada?.person.properties).toMatchObject({ email: 'ada@example.com', plan: 'pro' });
    const snapshots = await readAllSnapshots(
      t.http,
      `/api/projects/${projectId}/session_recordings/${recordings[0].id}/snapshots`,
      owner.auth,
    );
    // A page load starts with a Meta event carrying the address.
    expect(snapshots.events[0].event.type).toBe(4);
    expect(snapshots.events[0].event.data?.href).toMatch(/^https:\/\/shop\.example\.com\//);
    // Running it again adds new sessions; persons are reused.
    expect((await cli(['demo', '--project', String(projectId), '--sessions', '2'])).code).toBe(0);
    const again = await t.http
      .get(`/api/projects/${projectId}/session_recordings/`)
      .set(owner.auth)
      .expect(200);
    expect(again.body.count).toBe(9);
    const [{ persons }] = await t.dataSource.query(
      'SELECT count(*)::int AS persons FROM persons WHERE team_id = $1',
      [projectId],
    );
    expect(persons).toBe(5);
  }, 60_000);

  it('validates its arguments and the project', async () => {
    expect(await cli(['demo'])).toEqual({ code: 2, out: [], err: ['demo: --project is required'] });
    expect(await cli(['demo', '--project', 'x'])).toEqual({
      code: 2,
      out: [],
      err: ['demo: --project must be an integer between 1 and 2147483647'],
    });
    expect(await cli(['demo', '--project', String(projectId), '--sessions', '1001'])).toEqual({
      code: 2,
      out: [],
      err: ['demo: --sessions must be an integer between 1 and 1000'],
    });
    expect(await cli(['demo', '--project', '999999'])).toEqual({
      code: 2,
      out: [],
      err: ['demo: no project with id 999999'],
    });
    const help = await cli(['demo', '--help']);
    expect(help.code).toBe(0);
    expect(help.out[0]).toMatch(/^Usage: npm run cli -- demo --project ID/);
    expect((await cli(['--help'])).out[0]).toMatch(
      /\n {2}demo +Fill a project with generated session recordings\n/,
    );
  });
});
