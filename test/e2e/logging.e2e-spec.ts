import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import pg from 'pg';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';
import {
  bootstrapKey,
  MAIN,
  rawRequest,
  type ServiceProcess,
  sleep,
  startService,
  waitFor,
} from '../support/service-process.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

/** What the built service logs, as production runs it: quiet boot, one light JSON line per request. */

async function stop(service: ServiceProcess): Promise<void> {
  if (service.child.exitCode !== null) return;
  service.child.kill('SIGTERM');
  await service.exited;
}

/** The fields of a request's line, in their order. */
const REQUEST_LINE_KEYS = ['level', 'time', 'pid', 'hostname', 'reqId', 'req', 'res', 'responseTime', 'msg'];

/** Nest's start-up lines (modules initialised, routes mapped). */
const FRAMEWORK = ['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication'];

describe('logs of the built service', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;

  beforeAll(async () => {
    database = await cloneTemplate('logging');
    service = await startService({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      SCHEDULER_ENABLED: 'false',
    });
  });
  afterAll(async () => {
    if (service) await stop(service);
    await dropDatabase(database.name);
  });

  const lineOf = (id: string) => service.logs().filter((l) => l.reqId === id);

  it('boots quietly: no framework lines at info, every line a JSON object with a level name', async () => {
    await waitFor('the listening line', () => service.stdout().includes('listening on'));
    // (startService polls /healthz until it answers: those are request lines.)
    const logged = service.logs().filter((l) => !l.req);
    expect(logged.filter((l) => FRAMEWORK.includes(l.context as string))).toEqual([]);
    // The boot: the lines up to "listening on" (the scheduled tasks that tick once at boot may log after it,
    // or, on a busy machine, before the test reads).
    const listening = logged.findIndex(
      (l) => l.context === 'Bootstrap' && /^listening on/.test(String(l.msg)),
    );
    expect(listening).toBeGreaterThanOrEqual(0);
    const boot = logged.slice(0, listening + 1);
    if (boot.length > 3)
      throw new Error(
        `${boot.length} boot lines: ${boot.map((l) => `${String(l.context)}: ${String(l.msg)}`).join(' | ')}`,
      );
    expect(boot.at(-1)).toMatchObject({ level: 'info', context: 'Bootstrap' });
    // Apart from the bootstrap key banner (plain text, on this empty database), every line is JSON, and every
    // level is a name: boot lines and application lines share one format.
    const banner = /^(Created the first user |It is shown only|\s+phx_|Open http)/;
    const lines = service
      .stdout()
      .split('\n')
      .filter((l) => l && !banner.test(l));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(typeof (JSON.parse(line) as { level: unknown }).level).toBe('string');
  });

  it('logs one line per request at info for 2xx and 4xx, without headers', async () => {
    const cases: [string, string, number][] = [
      ['log-ok', '/healthz', 200],
      ['log-401', '/api/organizations', 401],
      ['log-404', '/no/such/route', 404],
    ];
    for (const [id, path, status] of cases) {
      const res = await rawRequest(service.base, path, { headers: { 'X-Request-Id': id } });
      expect(res.status).toBe(status);
    }
    await waitFor('three request lines', () => cases.every(([id]) => lineOf(id).length > 0));
    for (const [id, path, status] of cases) {
      const lines = lineOf(id);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toEqual({
        level: 'info',
        time: expect.any(Number),
        pid: service.child.pid,
        hostname: expect.any(String),
        reqId: id,
        req: { id, method: 'GET', url: path, ip: '127.0.0.1' },
        res: { statusCode: status },
        responseTime: expect.any(Number),
        msg: 'request completed',
      });
      // The fields in this order: the request's id first, as on every line of the request.
      expect(Object.keys(lines[0])).toEqual(REQUEST_LINE_KEYS);
    }
    // None of the response headers (security headers, request id) is in any line.
    expect(service.stdout()).not.toContain('content-security-policy');
    expect(service.stdout()).not.toContain('x-request-id');
  });

  it('logs capture, a direct route, as any other route: its request line, and its warnings under the same id', async () => {
    const org = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${await bootstrapKey(service)}` },
      body: { name: 'Logged' },
    });
    expect(org.status).toBe(201);
    const token = org.json<{ teams: { api_token: string }[] }>().teams[0].api_token;
    // A NUL in the uuid: the value is dropped with a warning, the rest is stored.
    const body = JSON.stringify([
      snapshotEvent({ token, sessionId: newSessionId(), uuid: 'a\u0000b', events: [rr.click(Date.now())] }),
    ]);
    const ok = await rawRequest(service.base, '/s/?ver=1.2.3', {
      method: 'POST',
      headers: { 'X-Request-Id': 'log-capture', 'Content-Type': 'text/plain' },
      raw: Buffer.from(body),
    });
    expect([ok.status, ok.json()]).toEqual([200, { status: 'Ok' }]);
    expect(ok.headers['x-request-id']).toBe('log-capture');
    expect(ok.headers['x-content-type-options']).toBe('nosniff');
    const refused = await rawRequest(service.base, '/s/', {
      method: 'POST',
      headers: { 'X-Request-Id': 'log-capture-401', 'Content-Type': 'text/plain' },
      raw: Buffer.from(
        JSON.stringify([snapshotEvent({ token: 'phc_unknown', sessionId: 's1', events: [] })]),
      ),
    });
    expect(refused.status).toBe(401);
    await waitFor('the capture request lines', () =>
      ['log-capture', 'log-capture-401'].every((id) => lineOf(id).some((l) => l.msg === 'request completed')),
    );
    const lines = lineOf('log-capture');
    expect(lines.map((l) => [l.level, l.context ?? null, l.msg])).toEqual([
      [
        'warn',
        'CaptureService',
        'capture dropped 1 value(s) that cannot be stored (NUL or lone UTF-16 surrogate) and stored the rest of the batch',
      ],
      ['info', null, 'request completed'],
    ]);
    expect(lines[1]).toMatchObject({
      req: { id: 'log-capture', method: 'POST', url: '/s/?ver=1.2.3' },
      res: { statusCode: 200 },
    });
    // A line logged during the request carries its id, first, and not the request's other fields.
    expect(Object.keys(lines[0]).slice(0, 6)).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'context',
    ]);
    expect(lines[0]).not.toHaveProperty('req');
    expect(Object.keys(lines[1])).toEqual(REQUEST_LINE_KEYS);
    expect(lineOf('log-capture-401')).toEqual([
      expect.objectContaining({
        level: 'info',
        req: expect.objectContaining({ url: '/s/' }),
        res: { statusCode: 401 },
      }),
    ]);
  });

  it('logs a request the client gave up on with the fields it arrived with', async () => {
    // A capture whose body never comes in full: the client closes the connection while it is read. (Capture reads
    // the client's address itself before its body; the next test holds a request whose address nothing else reads.)
    const socket = connect(service.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      'POST /s/?aborted=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: log-aborted\r\n' +
        'Content-Type: text/plain\r\nContent-Length: 100000\r\n\r\n[{"event":',
    );
    await sleep(300);
    socket.destroy();
    await waitFor('the aborted request line', () => lineOf('log-aborted').some((l) => l.req));
    const [line] = lineOf('log-aborted').filter((l) => l.req);
    expect(line.req).toEqual({ id: 'log-aborted', method: 'POST', url: '/s/?aborted=1', ip: '127.0.0.1' });
    expect(Object.keys(line).slice(0, 6)).toEqual(REQUEST_LINE_KEYS.slice(0, 6));
  });

  it('logs the address of a client that left before anything else read it: read on arrival (a closed socket has none)', async () => {
    // A shared recording's page held on its token lookup (the tokens' table locked here): a public route outside
    // the per-address cap, so nothing but the request log reads the client's address before the client leaves.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      await db.query('BEGIN');
      await db.query('LOCK TABLE session_recording_sharing_tokens IN ACCESS EXCLUSIVE MODE');
      const socket = connect(service.port, '127.0.0.1');
      await once(socket, 'connect');
      socket.write('GET /shared/log-held HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: log-held\r\n\r\n');
      await waitFor('the request to wait for the lock', async () => {
        const { rows } = await db.query<{ waiting: boolean }>(
          `SELECT count(*) > 0 AS waiting FROM pg_locks
            WHERE NOT granted AND relation = 'session_recording_sharing_tokens'::regclass
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        return rows[0].waiting;
      });
      socket.destroy();
      await waitFor('the held request line', () => lineOf('log-held').some((l) => l.req));
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.end();
    }
    const [line] = lineOf('log-held').filter((l) => l.req);
    expect(line).toMatchObject({ level: 'info', msg: 'request aborted' });
    // (The sharing token in the path is a credential: redacted.)
    expect(line.req).toEqual({ id: 'log-held', method: 'GET', url: '/shared/[redacted]', ip: '127.0.0.1' });
  });

  it('redirects GET / to the API documentation', async () => {
    const res = await rawRequest(service.base, '/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/docs');
    expect((await rawRequest(service.base, res.headers.location!)).status).toBe(200);
  });

  it('says which variable to set when the port is taken, and exits 1 without a stack', async () => {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: database.url,
        PORT: String(service.port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        SCHEDULER_ENABLED: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(1);
    expect(err.trim()).toBe(
      `Port ${service.port} (127.0.0.1) is already in use by another process. Stop that process, or set PORT ` +
        `to a free port (for example PORT=${service.port + 1}).`,
    );
  });
});

describe('LOG_LEVEL=debug', () => {
  it('shows the framework start-up lines, at debug', async () => {
    const database = await cloneTemplate('logging-debug');
    const service = await startService({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'debug',
      SCHEDULER_ENABLED: 'false',
    });
    try {
      await waitFor('the listening line', () => service.stdout().includes('listening on'));
      const framework = service.logs().filter((l) => FRAMEWORK.includes(l.context as string));
      expect(framework.length).toBeGreaterThan(20);
      expect(new Set(framework.map((l) => l.level))).toEqual(new Set(['debug']));
      expect(framework.some((l) => String(l.msg).startsWith('Mapped {/api/organizations'))).toBe(true);
    } finally {
      await stop(service);
      await dropDatabase(database.name);
    }
  });
});
