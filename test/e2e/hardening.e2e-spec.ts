import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import pg from 'pg';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  bootstrapKey,
  rawRequest,
  type ServiceProcess,
  startService,
  waitFor,
} from '../support/service-process.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';
import { margin } from '../support/shared-machine.js';

/** Security headers, CORS, request timeout, client addresses behind a proxy, request ids in error logs. */

describe('security headers', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    user = await t.factories.user();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(['/healthz', '/api/organizations', '/api/no-such-route'])('are sent on %s', async (path) => {
    const res = await t.http.get(path).set(user.auth);
    expect(res.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'referrer-policy': 'no-referrer',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'cross-origin-opener-policy': 'same-origin',
      // Browsers load the public SDK routes from other sites; nothing here relies on cookies.
      'cross-origin-resource-policy': 'cross-origin',
    });
    expect(res.headers['x-powered-by']).toBeUndefined();
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'self'");
    // /docs must keep working over plain http inside a cluster.
    expect(csp).not.toContain('upgrade-insecure-requests');
  });

  it('leave Swagger UI working: /docs loads only same-origin scripts, which are served', async () => {
    const page = await t.http.get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const scripts = [...page.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts.length).toBeGreaterThanOrEqual(3);
    const sources = scripts.map((attrs) => /src="([^"]+)"/.exec(attrs)?.[1]);
    // No inline script (CSP forbids it): every script is a file of this origin.
    expect(sources.every((src) => src !== undefined && !/^[a-z]+:|^\/\//i.test(src))).toBe(true);
    expect(sources).toContain('./docs/swagger-ui-init.js');
    for (const src of sources) {
      const res = await t.http.get(new URL(src!, 'http://x/docs').pathname).expect(200);
      expect(res.headers['content-type']).toMatch(/javascript/);
    }
    const init = await t.http.get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('SwaggerUIBundle');
    const css = /href="(\.\/docs\/swagger-ui\.css)"/.exec(page.text);
    expect(css).not.toBeNull();
    await t.http.get('/docs/swagger-ui.css').expect(200);
  });
});

describe('CORS', () => {
  const preflight = (t: TestApp, origin: string, path = '/api/organizations') =>
    t.http
      .options(path)
      .set('Origin', origin)
      .set('Access-Control-Request-Method', 'PATCH')
      .set('Access-Control-Request-Headers', 'authorization, content-type');

  it('is off unless CORS_ORIGINS is set: no CORS header on /api', async () => {
    const t = await createTestApp();
    try {
      const user = await t.factories.user();
      const res = await t.http
        .get('/api/organizations')
        .set(user.auth)
        .set('Origin', 'https://app.example.com');
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await preflight(t, 'https://app.example.com');
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      expect(pre.headers['access-control-allow-methods']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('allows the listed origins on /api only', async () => {
    const t = await createTestApp({ CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' });
    try {
      const user = await t.factories.user();
      const pre = await preflight(t, 'https://admin.example.com').expect(204);
      expect(pre.headers['access-control-allow-origin']).toBe('https://admin.example.com');
      expect(pre.headers['access-control-allow-methods']).toContain('PATCH');
      expect(pre.headers['access-control-allow-headers']).toBe('Authorization,Content-Type,X-Request-Id');
      expect(pre.headers['access-control-max-age']).toBe('600');
      expect(pre.headers['vary']).toContain('Origin');

      const res = await t.http
        .get('/api/organizations')
        .set(user.auth)
        .set('Origin', 'https://app.example.com');
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(res.headers['access-control-expose-headers']).toContain('X-Request-Id');
      expect(res.headers['access-control-expose-headers']).toContain('Retry-After');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();

      const stranger = await preflight(t, 'https://evil.example.net');
      expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
      const strangerGet = await t.http
        .get('/api/organizations')
        .set(user.auth)
        .set('Origin', 'https://evil.example.net');
      expect(strangerGet.headers['access-control-allow-origin']).toBeUndefined();

      // Routes outside /api answer CORS themselves (or not at all).
      const live = await t.http.get('/healthz').set('Origin', 'https://app.example.com').expect(200);
      expect(live.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('allows any origin with CORS_ORIGINS=*', async () => {
    const t = await createTestApp({ CORS_ORIGINS: '*' });
    try {
      const pre = await preflight(t, 'https://anywhere.example.org').expect(204);
      expect(pre.headers['access-control-allow-origin']).toBe('*');
    } finally {
      await t.close();
    }
  });
});

describe('REQUEST_TIMEOUT_MS', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ REQUEST_TIMEOUT_MS: '500' });
    user = await t.factories.user();
  });
  afterAll(async () => {
    await t.close();
  });

  it('bounds how long a client may take to send its request', () => {
    const server = t.app.getHttpServer() as Server;
    expect(server.requestTimeout).toBe(500);
    expect(server.headersTimeout).toBe(500);
  });

  it('answers 503 timeout when a handler runs longer, and serves the next request normally', async () => {
    const org = await t.factories.organization(user);
    // A row lock held by the test makes the PATCH wait in the database, past the timeout.
    const lock = new pg.Client({ connectionString: t.databaseUrl });
    await lock.connect();
    await lock.query('BEGIN');
    await lock.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [org.id]);
    try {
      const started = Date.now();
      const res = await t.http.patch(`/api/organizations/${org.id}`).set(user.auth).send({ name: 'Slow' });
      const elapsed = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        type: 'server_error',
        code: 'timeout',
        detail:
          'The request did not complete within 500 ms. Its changes may still take effect; check before retrying.',
        attr: null,
      });
      expect(elapsed).toBeGreaterThanOrEqual(450);
      expect(elapsed).toBeLessThan(500 + margin(2500));
    } finally {
      await lock.query('COMMIT');
      await lock.end();
    }
    // As the detail says, the abandoned update still completes once the lock is gone.
    await waitFor('the abandoned update to land', async () => {
      const res = await t.http.get(`/api/organizations/${org.id}`).set(user.auth);
      return res.body.name === 'Slow';
    });
    await t.http.get('/api/organizations').set(user.auth).expect(200);
  });
});

describe('client address and request ids in the logs of the built service', () => {
  let database: { name: string; url: string };
  let direct: ServiceProcess;
  let proxied: ServiceProcess;
  let key: string;

  beforeAll(async () => {
    database = await cloneTemplate('hardening');
    direct = await startService({ DATABASE_URL: database.url, LOG_LEVEL: 'info' });
    key = await bootstrapKey(direct);
    proxied = await startService({ DATABASE_URL: database.url, LOG_LEVEL: 'info', TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => {
    for (const s of [direct, proxied]) if (s && s.child.exitCode === null) s.child.kill('SIGKILL');
    await dropDatabase(database.name);
  });

  const requestLine = (service: ServiceProcess, id: string) =>
    service.logs().find((l) => (l.req as { id?: string } | undefined)?.id === id && l.res) as
      { req: { ip: string } } | undefined;

  it('logs X-Forwarded-For as the client address only when TRUST_PROXY trusts the sender', async () => {
    const headers = (id: string) => ({ 'X-Forwarded-For': '203.0.113.9', 'X-Request-Id': id });
    expect((await rawRequest(direct.base, '/healthz', { headers: headers('xff-direct') })).status).toBe(200);
    expect((await rawRequest(proxied.base, '/healthz', { headers: headers('xff-proxied') })).status).toBe(
      200,
    );
    await waitFor(
      'both request lines',
      () => !!requestLine(direct, 'xff-direct') && !!requestLine(proxied, 'xff-proxied'),
    );
    expect(requestLine(direct, 'xff-direct')!.req.ip).toBe('127.0.0.1');
    expect(requestLine(proxied, 'xff-proxied')!.req.ip).toBe('203.0.113.9');
  });

  it('logs a 500 with the request id on the error line and the request line', async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query('ALTER TABLE projects RENAME TO projects_broken');
    try {
      const res = await rawRequest(direct.base, '/api/projects/1', {
        headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': 'broken-1' },
      });
      expect(res.status).toBe(500);
      expect(res.headers['x-request-id']).toBe('broken-1');
      expect(res.json()).toEqual({
        type: 'server_error',
        code: 'error',
        detail: 'A server error occurred.',
        attr: null,
      });
    } finally {
      await admin.query('ALTER TABLE projects_broken RENAME TO projects');
      await admin.end();
    }
    await waitFor('the request line', () => !!requestLine(direct, 'broken-1'));
    const error = direct.logs().find((l) => l.msg === 'unhandled error' && l.reqId === 'broken-1');
    expect(error).toMatchObject({ level: 'error', context: 'ExceptionFilter', reqId: 'broken-1' });
    expect(JSON.stringify(error)).toContain('projects');
    const line = requestLine(direct, 'broken-1')!;
    expect(line).toMatchObject({
      level: 'error',
      reqId: 'broken-1',
      req: { id: 'broken-1', method: 'GET', url: '/api/projects/1', ip: '127.0.0.1' },
      res: { statusCode: 500 },
      err: { type: 'Error', message: 'failed with status code 500' },
      msg: 'request errored',
    });
    // The fields in this order: the request's id first, as on every line of the request.
    expect(Object.keys(line)).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'req',
      'res',
      'err',
      'responseTime',
      'msg',
    ]);
  });
});
