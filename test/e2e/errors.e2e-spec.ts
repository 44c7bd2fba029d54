import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { NOT_FOUND } from '../support/expectations.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LOCAL_ORIGIN_RE = /^http:\/\/127\.0\.0\.1:\d+$/;

const UNSUPPORTED = {
  type: 'invalid_request',
  code: 'unsupported_media_type',
  detail: 'Unsupported media type: send the body as application/json.',
  attr: null,
};
const MALFORMED_JSON = {
  type: 'validation_error',
  code: 'parse_error',
  detail: 'Malformed request body: not valid JSON.',
  attr: null,
};
const NOT_AN_OBJECT = {
  type: 'validation_error',
  code: 'invalid_input',
  detail: 'Expected a JSON object in the request body.',
  attr: null,
};

describe('wire conventions and errors', () => {
  let t: TestApp;
  let user: TestUser;
  let first: { id: string };
  let second: { id: string };

  beforeAll(async () => {
    t = await createTestApp();
    user = await t.factories.user();
    first = await t.factories.organization(user, 'Errors One');
    second = await t.factories.organization(user, 'Errors Two');
  });

  afterAll(async () => {
    await t.close();
  });

  describe('unknown routes and methods', () => {
    it('an unknown route is 404 with the error body, with or without a key', async () => {
      const withKey = await t.http.get('/api/nothing-here').set(user.auth).expect(404);
      expect(withKey.body).toEqual(NOT_FOUND);
      expect(withKey.headers['content-type']).toMatch(/^application\/json/);
      const withoutKey = await t.http.get('/no/such/path').expect(404);
      expect(withoutKey.body).toEqual(NOT_FOUND);
    });

    it('a known path with another method is 405 method_not_allowed with an Allow header', async () => {
      const res = await t.http.put('/api/organizations').set(user.auth).send({ name: 'x' }).expect(405);
      expect(res.body).toEqual({
        type: 'invalid_request',
        code: 'method_not_allowed',
        detail: 'Method "PUT" not allowed.',
        attr: null,
      });
      expect(res.headers.allow).toBe('GET, HEAD, OPTIONS, POST');
    });

    it('405 names the methods of the item path too, and works with a trailing slash', async () => {
      const res = await t.http.post(`/api/organizations/${first.id}/`).set(user.auth).send({}).expect(405);
      expect(res.body.code).toBe('method_not_allowed');
      expect(res.headers.allow).toBe('DELETE, GET, HEAD, OPTIONS, PATCH, PUT');
    });

    it('405 is answered before authentication (no key needed to learn the methods)', async () => {
      const res = await t.http.delete('/api/organizations').expect(405);
      expect(res.body.code).toBe('method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD, OPTIONS, POST');
    });
  });

  describe('request bodies', () => {
    it('a text/plain body on POST is 415', async () => {
      const res = await t.http
        .post('/api/organizations')
        .set(user.auth)
        .set('Content-Type', 'text/plain')
        .send('name=x')
        .expect(415);
      expect(res.body).toEqual(UNSUPPORTED);
    });

    it('a form body on PATCH is 415', async () => {
      const res = await t.http
        .patch(`/api/organizations/${first.id}`)
        .set(user.auth)
        .type('form')
        .send({ name: 'x' })
        .expect(415);
      expect(res.body).toEqual(UNSUPPORTED);
    });

    it('application/json with a charset is accepted', async () => {
      const res = await t.http
        .post('/api/organizations')
        .set(user.auth)
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ name: 'Charset Org' }))
        .expect(201);
      expect(res.body.name).toBe('Charset Org');
      await t.http.delete(`/api/organizations/${res.body.id}`).set(user.auth).expect(204);
    });

    it('malformed JSON is 400', async () => {
      const res = await t.http
        .post('/api/organizations')
        .set(user.auth)
        .set('Content-Type', 'application/json')
        .send('{"name": "x"')
        .expect(400);
      expect(res.body).toEqual(MALFORMED_JSON);
    });

    it('a JSON array body is 400', async () => {
      const res = await t.http
        .post('/api/organizations')
        .set(user.auth)
        .send([{ name: 'x' }])
        .expect(400);
      expect(res.body).toEqual(NOT_AN_OBJECT);
    });

    it('a JSON string or number body is 400 too', async () => {
      for (const body of ['"x"', '42']) {
        const res = await t.http
          .post('/api/organizations')
          .set(user.auth)
          .set('Content-Type', 'application/json')
          .send(body)
          .expect(400);
        expect(res.body.type).toBe('validation_error');
        expect(res.body.attr).toBeNull();
      }
    });
  });

  describe('trailing slashes', () => {
    it('list works with a trailing slash', async () => {
      const res = await t.http.get('/api/organizations/').set(user.auth).expect(200);
      expect(res.body.count).toBe(2);
      expect(res.body.results.map((o: { id: string }) => o.id)).toEqual([first.id, second.id]);
    });

    it('retrieve works with a trailing slash', async () => {
      const res = await t.http.get(`/api/organizations/${first.id}/`).set(user.auth).expect(200);
      expect(res.body.id).toBe(first.id);
      expect(res.body.name).toBe('Errors One');
    });

    it('create works with a trailing slash', async () => {
      const res = await t.http
        .post('/api/organizations/')
        .set(user.auth)
        .send({ name: 'Slash Org' })
        .expect(201);
      expect(res.body.name).toBe('Slash Org');
      expect(res.body.slug).toBe('slash-org');
      await t.http.delete(`/api/organizations/${res.body.id}/`).set(user.auth).expect(204);
      await t.http.get(`/api/organizations/${res.body.id}`).set(user.auth).expect(404);
    });

    it('introspection paths work with a trailing slash', async () => {
      const me = await t.http.get('/api/users/@me/').set(user.auth).expect(200);
      expect(me.body.id).toBe(user.id);
      const key = await t.http.get('/api/personal_api_keys/@current/').set(user.auth).expect(200);
      expect(key.body.id).toBe(user.keyId);
    });
  });

  describe('list links', () => {
    it('unknown query parameters are ignored and kept in the links', async () => {
      const res = await t.http.get('/api/organizations?foo=1&limit=1').set(user.auth).expect(200);
      expect(res.body.count).toBe(2);
      expect(res.body.previous).toBeNull();
      expect(res.body.results.map((o: { id: string }) => o.id)).toEqual([first.id]);

      const next = new URL(res.body.next);
      expect(next.origin).toMatch(LOCAL_ORIGIN_RE);
      expect(next.pathname).toBe('/api/organizations');
      expect([...next.searchParams.entries()]).toEqual([
        ['foo', '1'],
        ['limit', '1'],
        ['offset', '1'],
      ]);

      const page2 = await t.http
        .get(next.pathname + next.search)
        .set(user.auth)
        .expect(200);
      expect(page2.body.count).toBe(2);
      expect(page2.body.next).toBeNull();
      expect(page2.body.results.map((o: { id: string }) => o.id)).toEqual([second.id]);
      const previous = new URL(page2.body.previous);
      // Supertest serves each request on a fresh ephemeral port, so only the shape of the origin is stable.
      expect(previous.origin).toMatch(LOCAL_ORIGIN_RE);
      expect(previous.pathname).toBe('/api/organizations');
      expect([...previous.searchParams.entries()]).toEqual([
        ['foo', '1'],
        ['limit', '1'],
        ['offset', '0'],
      ]);
    });

    it('next and previous are absolute URLs of the request host', async () => {
      const res = await t.http
        .get('/api/organizations?limit=1&offset=1')
        .set(user.auth)
        .set('Host', 'svc.internal:8080')
        .expect(200);
      expect(res.body.next).toBeNull();
      expect(res.body.previous).toBe('http://svc.internal:8080/api/organizations?limit=1&offset=0');
    });

    it('X-Forwarded-* headers are ignored without TRUST_PROXY', async () => {
      const res = await t.http
        .get('/api/organizations?limit=1')
        .set(user.auth)
        .set('X-Forwarded-Proto', 'https')
        .set('X-Forwarded-Host', 'api.example.com')
        .expect(200);
      const next = new URL(res.body.next);
      expect(next.origin).toMatch(LOCAL_ORIGIN_RE);
      expect(next.href).toBe(`${next.origin}/api/organizations?limit=1&offset=1`);
    });

    it('limit and offset are validated with attr', async () => {
      const limit = await t.http.get('/api/organizations?limit=0&foo=1').set(user.auth).expect(400);
      expect(limit.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: "'limit' must be between 1 and 1000.",
        attr: 'limit',
      });
      const offset = await t.http.get('/api/organizations?offset=-1').set(user.auth).expect(400);
      expect(offset.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: "'offset' must be a non-negative integer.",
        attr: 'offset',
      });
    });
  });

  describe('health and request ids', () => {
    it('/healthz is 200 {status: ok} without a key', async () => {
      const res = await t.http.get('/healthz').expect(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('/readyz is 200 with the database up, without a key', async () => {
      const res = await t.http.get('/readyz').expect(200);
      expect(res.body).toEqual({ status: 'ok', database: 'up' });
    });

    it('X-Request-Id is echoed when sent', async () => {
      const res = await t.http.get('/healthz').set('X-Request-Id', 'req-abc.123:x').expect(200);
      expect(res.headers['x-request-id']).toBe('req-abc.123:x');
    });

    it('X-Request-Id is generated when not sent, and differs per request', async () => {
      const a = await t.http.get('/healthz').expect(200);
      const b = await t.http.get('/healthz').expect(200);
      expect(a.headers['x-request-id']).toMatch(UUID_RE);
      expect(b.headers['x-request-id']).toMatch(UUID_RE);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });

    it('a malformed X-Request-Id is replaced by a generated one', async () => {
      const res = await t.http.get('/healthz').set('X-Request-Id', 'bad id <script>').expect(200);
      expect(res.headers['x-request-id']).toMatch(UUID_RE);
    });

    it('error responses carry the request id too', async () => {
      const res = await t.http.get('/api/organizations').set('X-Request-Id', 'err-1').expect(401);
      expect(res.headers['x-request-id']).toBe('err-1');
    });
  });

  describe('500', () => {
    it('an unexpected failure is a 500 whose body carries no internals', async () => {
      const [project] = await t.dataSource.query<{ id: number }[]>('SELECT id FROM projects LIMIT 1');
      // Break the projects table of this test's own database so the query fails inside the handler.
      await t.dataSource.query('ALTER TABLE projects RENAME TO projects_broken');
      // TypeORM prints the failed query on the console; keep the test output clean.
      const consoleLog = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      try {
        const res = await t.http.get(`/api/projects/${project.id}`).set(user.auth).expect(500);
        expect(res.body).toEqual({
          type: 'server_error',
          code: 'error',
          detail: 'A server error occurred.',
          attr: null,
        });
        expect(res.text).not.toMatch(/projects|relation|SELECT|QueryFailedError|at /);
      } finally {
        consoleLog.mockRestore();
        await t.dataSource.query('ALTER TABLE projects_broken RENAME TO projects');
      }
      await t.http.get(`/api/projects/${project.id}`).set(user.auth).expect(200);
    });
  });
});

describe('BODY_LIMIT', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ BODY_LIMIT: '1kb' });
    user = await t.factories.user();
  });

  afterAll(async () => {
    await t.close();
  });

  it('a body over the limit is 413 payload_too_large', async () => {
    const res = await t.http
      .post('/api/organizations')
      .set(user.auth)
      .send({ name: 'Big', padding: 'x'.repeat(2048) })
      .expect(413);
    expect(res.body).toEqual({
      type: 'invalid_request',
      code: 'payload_too_large',
      detail: 'Request body is too large.',
      attr: null,
    });
  });

  it('a body under the limit goes through', async () => {
    const res = await t.http.post('/api/organizations').set(user.auth).send({ name: 'Small' }).expect(201);
    expect(res.body.name).toBe('Small');
  });
});

describe('TRUST_PROXY', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ TRUST_PROXY: 'true' });
    user = await t.factories.user();
    await t.factories.organization(user, 'Proxy One');
    await t.factories.organization(user, 'Proxy Two');
  });

  afterAll(async () => {
    await t.close();
  });

  it('X-Forwarded-Proto and X-Forwarded-Host set the origin of the links', async () => {
    const res = await t.http
      .get('/api/organizations?limit=1&foo=bar')
      .set(user.auth)
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'api.example.com')
      .expect(200);
    expect(res.body.next).toBe('https://api.example.com/api/organizations?limit=1&foo=bar&offset=1');
    expect(res.body.previous).toBeNull();
  });

  it('without forwarded headers the links use the request host', async () => {
    const res = await t.http.get('/api/organizations?limit=1').set(user.auth).expect(200);
    const next = new URL(res.body.next);
    expect(next.origin).toMatch(LOCAL_ORIGIN_RE);
  });
});
