import { describe, expect, it } from '@jest/globals';
import { match } from 'path-to-regexp';
import { prefilterRoutes, segmentPrefilter } from './route-prefilter.js';

/** Route paths of the shapes the service declares. */
const ROUTES = [
  '/api/organizations',
  '/api/organizations/:id',
  '/api/organizations/@current',
  '/api/organizations/:organization_id/batch_exports/:id/runs/:run_id/logs',
  '/api/projects/:project_id/session_recordings/:id',
  '/api/projects/:project_id/session_recordings/:id/snapshots',
  '/api/environments/:project_id/session_recordings',
  '/docs/swagger-ui-init.js',
  '/i/v0/e',
  '/s',
  '/scim/v2/:organization_id/Users/:user_id',
];

/** Request paths around each route: its own filled in, and every way one could be near it. */
function pathsNear(route: string): string[] {
  const filled = route.replace(/:[A-Za-z_]+/g, 'x1');
  const segments = filled.split('/');
  const out = [
    filled,
    `${filled}/`,
    `${filled}//`,
    `/${filled}`,
    filled.toUpperCase(),
    filled.replace(/[a-z]/, (c) => c.toUpperCase()),
    `${filled}/extra`,
    `${filled}x`,
    filled.slice(0, -1),
    filled.replace(/x1/g, ''),
    filled.replace(/x1/g, '%2F'),
    filled.replace(/x1/g, 'a%20b'),
    filled.replace(/x1/g, 'İ'),
    filled.replace(/s/g, 'ſ'),
    filled.replace(/k/g, '\u212a'),
    filled.replace(/i/g, 'İ'),
    '/',
    '',
    '//',
  ];
  for (let i = 1; i < segments.length; i++) {
    out.push([...segments.slice(0, i), ...segments.slice(i + 1)].join('/'));
    out.push([...segments.slice(0, i), 'other', ...segments.slice(i + 1)].join('/'));
    out.push([...segments.slice(0, i), '', ...segments.slice(i + 1)].join('/'));
  }
  return out;
}

describe('segmentPrefilter', () => {
  const allPaths = ROUTES.flatMap(pathsNear);

  it("never refuses a path the route's own expression (Express's options) matches, and refuses most others", () => {
    let refused = 0;
    let matched = 0;
    for (const route of ROUTES) {
      const couldMatch = segmentPrefilter(route);
      expect(couldMatch).not.toBeNull();
      const expression = match(route, { sensitive: false, end: true, trailing: true });
      for (const path of allPaths) {
        const matches = expression(path) !== false;
        if (matches) {
          matched++;
          expect({ route, path, couldMatch: couldMatch!(path) }).toEqual({ route, path, couldMatch: true });
        } else if (!couldMatch!(path)) refused++;
      }
    }
    // The filter is worth having only if it refuses: nearly every non-matching pair here.
    expect(matched).toBeGreaterThan(ROUTES.length * 4);
    const nonMatching = ROUTES.length * allPaths.length - matched;
    expect(refused / nonMatching).toBeGreaterThan(0.95);
  });

  it('takes only static segments and whole-segment parameters', () => {
    for (const route of [
      '/',
      '/docs/',
      '{/*splat}',
      '/files/*path',
      '/a/:id.json',
      '/a{/:b}',
      '/a/(b)',
      'a/b',
    ]) {
      expect({ route, filter: segmentPrefilter(route) }).toEqual({ route, filter: null });
    }
  });
});

describe('prefilterRoutes', () => {
  function layer(path: string, route = true) {
    const expression = match(path, { sensitive: false, end: true, trailing: true });
    const calls: string[] = [];
    return {
      route: route ? {} : undefined,
      rawPath: path,
      calls,
      match(p: string) {
        calls.push(p);
        return expression(p);
      },
    };
  }

  it("runs a route's own match only for the paths it could match, with its own answer", () => {
    const organization = layer('/api/organizations/:id');
    const list = layer('/api/organizations');
    const middleware = layer('/api/organizations', false);
    const splat = { ...layer('/x'), rawPath: '{/*splat}' };
    expect(prefilterRoutes({ stack: [organization, list, middleware, splat] })).toBe(2);

    expect(organization.match('/api/projects/1')).toBe(false);
    expect(organization.calls).toEqual([]);
    expect(organization.match('/API/organizations/0192/')).toEqual({
      path: '/API/organizations/0192/',
      params: { id: '0192' },
    });
    expect(organization.calls).toEqual(['/API/organizations/0192/']);
    expect(list.match('/api/organizations/0192')).toBe(false);
    expect(list.calls).toEqual([]);
    // Layers that are not routes, and routes of other shapes, are left as they are.
    middleware.match('/anything');
    splat.match('/anything');
    expect(middleware.calls).toEqual(['/anything']);
    expect(splat.calls).toEqual(['/anything']);
  });

  it('changes nothing on a router that is case-sensitive, strict, or not of the expected shape', () => {
    const route = layer('/api/organizations/:id');
    expect(prefilterRoutes({ stack: [route], caseSensitive: true })).toBe(0);
    expect(prefilterRoutes({ stack: [route], strict: true })).toBe(0);
    expect(prefilterRoutes(undefined)).toBe(0);
    expect(prefilterRoutes({})).toBe(0);
    route.match('/api/projects/1');
    expect(route.calls).toEqual(['/api/projects/1']);
  });
});
