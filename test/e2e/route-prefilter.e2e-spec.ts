import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isDeepStrictEqual } from 'node:util';
import { match } from 'path-to-regexp';
import { RoutePrefilter, segmentPrefilter } from '../../src/common/http/route-prefilter.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  rawPath?: unknown;
  match(path: string): unknown;
}

/**
 * The route prefilter on the application's own route table: every route of a simple path is fitted, each still
 * matches exactly what Express's expression for it matches, and requests route as before.
 */
describe('route prefilter (the route walk of the application)', () => {
  let t: TestApp;
  let layers: Layer[];

  beforeAll(async () => {
    t = await createTestApp();
    const express = t.app.getHttpAdapter().getInstance() as { router: { stack: Layer[] } };
    layers = express.router.stack.filter((layer) => layer.route && typeof layer.rawPath === 'string');
  });
  afterAll(() => t?.close());

  it('is fitted to every route whose path it can read (all but a few)', () => {
    const simple = layers.filter((layer) => segmentPrefilter(layer.rawPath as string) !== null);
    expect(simple.length).toBeGreaterThan(300);
    expect(t.app.get(RoutePrefilter).fitted).toBe(simple.length);
  });

  it("matches what each route's expression matches, on paths of every route of the table", () => {
    const paths = [
      ...new Set(
        layers.flatMap((layer) => {
          const filled = (layer.rawPath as string).replace(/:[A-Za-z_]+/g, '0192aB');
          return [filled, `${filled}/`, filled.toUpperCase(), `${filled}/x`, filled.replace(/0192aB/g, '')];
        }),
      ),
    ];
    let matched = 0;
    const differences: unknown[] = [];
    for (const layer of layers) {
      // Express compiles a route's path without its trailing slashes.
      const expression = match((layer.rawPath as string).replace(/\/+$/, '') || '/', {
        sensitive: false,
        end: true,
        trailing: true,
      });
      for (const path of paths) {
        const expected = expression(path);
        const got = layer.match(path) as false | { params: unknown };
        if (expected) matched++;
        if (
          Boolean(got) !== Boolean(expected) ||
          (got && expected && !isDeepStrictEqual(got.params, expected.params))
        )
          differences.push({ route: layer.rawPath, path, got, expected });
      }
    }
    expect(differences).toEqual([]);
    expect(matched).toBeGreaterThan(layers.length * 3);
  });

  it('routes requests as before: a trailing slash, an unknown path', async () => {
    const user = await t.factories.user();
    const org = await t.factories.organization(user);
    // (Another case of the path routes too, as the table check shows; the contract recorder knows paths by case.)
    for (const path of [`/api/organizations/${org.id}`, `/api/organizations/${org.id}/`]) {
      const res = await t.http.get(path).set(user.auth);
      expect({ path, status: res.status, id: res.body.id }).toEqual({ path, status: 200, id: org.id });
    }
    const unknown = await t.http.get(`/api/organizations/${org.id}/no_such_thing`).set(user.auth);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'invalid_request', code: 'not_found' });
  });
});
