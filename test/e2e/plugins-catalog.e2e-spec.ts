import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { margin } from '../support/shared-machine.js';

type Mode = 'ok' | 'invalid' | 'not_json' | 'error' | 'slow';

const SERVED = [
  {
    name: 'Remote Destination',
    url: 'https://github.com/acme/remote-destination',
    description: 'Served by the test repository.',
    icon: null,
    latest_tag: '9.9.9',
    maintainer: 'acme',
  },
  { name: 'Bare', url: 'https://github.com/acme/bare' },
];

/** A real HTTP server on loopback serving a catalog, broken on demand. */
class CatalogServer {
  mode: Mode = 'ok';
  hits = 0;
  private server: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.hits += 1;
      if (req.url !== '/repository.json') {
        res.writeHead(404).end();
        return;
      }
      switch (this.mode) {
        case 'ok':
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SERVED));
          return;
        case 'invalid':
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify([SERVED[0], { name: 'No url' }]));
          return;
        case 'not_json':
          res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
          return;
        case 'error':
          res.writeHead(500).end('boom');
          return;
        case 'slow':
          setTimeout(() => {
            if (!res.writableEnded) res.writeHead(200).end(JSON.stringify(SERVED));
          }, 20_000).unref();
          return;
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/repository.json`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const TTL_SECONDS = 60;

describe('plugin repository catalog from PLUGIN_REPOSITORY_URL', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  const catalog = new CatalogServer();
  const repository = () =>
    t.http.get(`/api/organizations/${orgId}/pipeline_destinations/repository`).set(owner.auth);
  /** Lets the cached catalog expire. */
  const expire = () => t.clock.advance((TTL_SECONDS + 1) * 1000);

  beforeAll(async () => {
    const url = await catalog.start();
    t = await createTestApp({
      PLUGIN_REPOSITORY_URL: url,
      PLUGIN_REPOSITORY_TIMEOUT_MS: '300',
      PLUGIN_REPOSITORY_CACHE_SECONDS: String(TTL_SECONDS),
    });
    owner = await t.factories.user();
    orgId = (await t.factories.organization(owner, 'Catalog Org')).id;
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => {
    catalog.mode = 'ok';
    expire();
  });

  it('serves the fetched catalog, with optional keys filled, and reuses it until the TTL passes', async () => {
    const hits = catalog.hits;
    const first = await repository().expect(200);
    expect(first.body).toEqual([
      SERVED[0],
      { name: 'Bare', url: 'https://github.com/acme/bare', description: null, icon: null, latest_tag: null },
    ]);
    expect(catalog.hits).toBe(hits + 1);
    t.clock.advance((TTL_SECONDS - 1) * 1000);
    await repository().expect(200, first.body);
    expect(catalog.hits).toBe(hits + 1);
    t.clock.advance(2000);
    await repository().expect(200, first.body);
    expect(catalog.hits).toBe(hits + 2);
  });

  it('shares one fetch between concurrent requests', async () => {
    const hits = catalog.hits;
    const results = await Promise.all(Array.from({ length: 5 }, () => repository()));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(catalog.hits).toBe(hits + 1);
  });

  it('takes latest_tag for check_for_updates from the fetched catalog', async () => {
    const created = await t.http
      .post(`/api/organizations/${orgId}/pipeline_destinations`)
      .set(owner.auth)
      .send({ plugin_type: 'repository', name: 'Remote', url: 'https://github.com/acme/remote-destination' })
      .expect(201);
    const res = await t.http
      .get(`/api/organizations/${orgId}/pipeline_destinations/${created.body.id}/check_for_updates`)
      .set(owner.auth)
      .expect(200);
    expect(res.body.plugin).toEqual({ ...created.body, latest_tag: '9.9.9' });

    // A failing catalog leaves the record as it was.
    expire();
    catalog.mode = 'error';
    await t.http
      .get(`/api/organizations/${orgId}/pipeline_destinations/${created.body.id}/check_for_updates`)
      .set(owner.auth)
      .expect(502);
    const after = await t.http
      .get(`/api/organizations/${orgId}/pipeline_destinations/${created.body.id}`)
      .set(owner.auth)
      .expect(200);
    expect(after.body.latest_tag).toBe('9.9.9');
  });

  it.each([
    [
      'invalid',
      502,
      'repository_invalid',
      'returned an invalid catalog: entry 1 has no valid http(s) "url".',
    ],
    ['not_json', 502, 'repository_invalid', 'returned an invalid catalog: not valid JSON.'],
    ['error', 502, 'repository_unavailable', 'answered HTTP 500.'],
    ['slow', 504, 'repository_timeout', 'did not answer within 300 ms.'],
  ] as const)(
    'answers a %s catalog with %i %s, and does not cache the failure',
    async (mode, status, code, end) => {
      catalog.mode = mode;
      const started = Date.now();
      const res = await repository().expect(status);
      expect(res.body).toEqual({
        type: 'server_error',
        code,
        detail: expect.stringMatching(/^The plugin repository at 127\.0\.0\.1:\d+ /),
        attr: null,
      });
      expect(res.body.detail.endsWith(end)).toBe(true);
      // The 300 ms timeout answered, not the 20 s the repository would have taken.
      if (mode === 'slow') expect(Date.now() - started).toBeLessThan(300 + margin(1200));
      catalog.mode = 'ok';
      await repository().expect(200);
    },
  );

  it('answers 502 when the repository cannot be reached', async () => {
    await catalog.close();
    const res = await repository().expect(502);
    expect(res.body).toEqual({
      type: 'server_error',
      code: 'repository_unavailable',
      detail: expect.stringMatching(/^The plugin repository at 127\.0\.0\.1:\d+ could not be reached\.$/),
      attr: null,
    });
  });
});

describe('the catalog shipped with the service', () => {
  it('is copied into dist/ by the build and read from there', async () => {
    const dist = (await import('../../dist/plugins/catalog/plugin-catalog.js' as string)) as {
      BUNDLED_CATALOG: URL;
    };
    expect(dist.BUNDLED_CATALOG.pathname).toMatch(/\/dist\/plugins\/catalog\/repository\.json$/);
    const source = new URL('../../src/plugins/catalog/repository.json', import.meta.url);
    expect(readFileSync(dist.BUNDLED_CATALOG, 'utf8')).toBe(readFileSync(source, 'utf8'));
  });
});
