import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

/**
 * Express finds a request's route by walking its route table in order, running each route's regular expression
 * until one matches: some 370 layers here, so a recording's retrieve ran about 280 expressions before its own
 * (a tenth of the service's CPU per small read, docs/performance.md). This puts a cheap test in front of each
 * route's expression: the path's segments (split once per path) against the route's segment count and static
 * segments. It only ever says "cannot match" where the expression would not match either, and otherwise lets the
 * expression decide, so the route found, its parameters, `OPTIONS`'s allowed methods and the order of precedence
 * are Express's own.
 *
 * A route takes part when its path is made of static segments of letters, digits and `_.~@-` and of whole-segment
 * parameters (`:name`), and the router matches case-insensitively with an optional trailing slash (Express's
 * defaults). Any other route (wildcards, optional groups, a regular expression) runs its expression as before.
 */

/** The part of Express's router layer used here (router 2.x). */
interface RouterLayer {
  route?: unknown;
  rawPath?: unknown;
  match(path: string): unknown;
}

interface ExpressRouter {
  stack?: RouterLayer[];
  caseSensitive?: boolean;
  strict?: boolean;
}

const STATIC_SEGMENT = /^[A-Za-z0-9_.~@-]+$/;
const PARAM_SEGMENT = /^:[A-Za-z_$][A-Za-z0-9_$]*$/;

let cachedPath: string | undefined;
let cachedParts: string[] = [];

/** `path` without one trailing slash, lower-cased, split at `/` (the last path's, kept: one walk asks ~370 times). */
function partsOf(path: string): string[] {
  if (path !== cachedPath) {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    cachedParts = trimmed.toLowerCase().split('/');
    cachedPath = path;
  }
  return cachedParts;
}

/**
 * For a route path of static segments and `:name` parameters, a test that is false for every request path the
 * route's expression (case-insensitive, optional trailing slash, a parameter being one or more characters other
 * than `/`) cannot match; null for any other route path.
 */
export function segmentPrefilter(routePath: string): ((path: string) => boolean) | null {
  if (!routePath.startsWith('/') || routePath === '/') return null;
  const segments = routePath.slice(1).split('/');
  const statics: (string | null)[] = [''];
  for (const segment of segments) {
    if (STATIC_SEGMENT.test(segment)) statics.push(segment.toLowerCase());
    else if (PARAM_SEGMENT.test(segment)) statics.push(null);
    else return null;
  }
  const length = statics.length;
  return (path: string): boolean => {
    const parts = partsOf(path);
    if (parts.length !== length || parts[0] !== '') return false;
    for (let i = 1; i < length; i++) {
      const expected = statics[i];
      if (expected === null ? parts[i] === '' : parts[i] !== expected) return false;
    }
    return true;
  };
}

/**
 * Puts `segmentPrefilter` in front of the match of every route layer of `router` it applies to; the number of
 * layers so fitted (0 when the router is not Express's default shape: nothing is changed then).
 */
export function prefilterRoutes(router: ExpressRouter | undefined): number {
  if (!router || !Array.isArray(router.stack) || router.caseSensitive || router.strict) return 0;
  let fitted = 0;
  for (const layer of router.stack) {
    if (!layer.route || typeof layer.rawPath !== 'string' || typeof layer.match !== 'function') continue;
    const couldMatch = segmentPrefilter(layer.rawPath);
    if (!couldMatch) continue;
    const match = layer.match;
    layer.match = function prefilteredMatch(this: RouterLayer, path: string) {
      return typeof path === 'string' && !couldMatch(path) ? false : match.call(this, path);
    };
    fitted++;
  }
  return fitted;
}

/** Fits the prefilter once every route is registered (Nest registers them before the bootstrap hooks run). */
@Injectable()
export class RoutePrefilter implements OnApplicationBootstrap {
  private readonly logger = new Logger(RoutePrefilter.name);
  /** Route layers fitted with the prefilter. */
  fitted = 0;

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onApplicationBootstrap(): void {
    const instance = this.adapterHost.httpAdapter?.getInstance?.() as { router?: ExpressRouter } | undefined;
    this.fitted = prefilterRoutes(instance?.router);
    this.logger.debug(`route prefilter: ${this.fitted} route layers`);
  }
}
