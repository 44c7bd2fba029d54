import { describe, expect, it } from '@jest/globals';
import { routeTemplate, UNMATCHED_ROUTE } from './metrics.service.js';

describe('routeTemplate', () => {
  it('is the matched route path, prefixed by the router mount path', () => {
    expect(routeTemplate({ baseUrl: '', route: { path: '/api/organizations/:id' } })).toBe(
      '/api/organizations/:id',
    );
    expect(routeTemplate({ baseUrl: '/admin', route: { path: '/users/:id' } })).toBe('/admin/users/:id');
    expect(routeTemplate({ baseUrl: '', route: { path: '/' } })).toBe('/');
  });

  it('is `unmatched` without a route, for catch-all routes and for non-string paths', () => {
    expect(routeTemplate({ baseUrl: '' })).toBe(UNMATCHED_ROUTE);
    expect(routeTemplate({ baseUrl: '', route: { path: '{/*splat}' } })).toBe(UNMATCHED_ROUTE);
    expect(routeTemplate({ baseUrl: '', route: { path: /^\/x/ } })).toBe(UNMATCHED_ROUTE);
    expect(UNMATCHED_ROUTE).toBe('unmatched');
  });
});
