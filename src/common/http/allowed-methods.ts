import type { Request } from 'express';

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): unknown;
}

/**
 * The HTTP methods registered for the request's path with any method, read from Express's router, so a known
 * path called with another method can be answered 405 with an `Allow` header rather than 404.
 */
export function allowedMethodsFor(req: Request): string[] {
  const router = (req.app as unknown as { router?: { stack?: RouterLayer[] } }).router;
  const methods = new Set<string>();
  for (const layer of router?.stack ?? []) {
    // Catch-all routes (`{/*splat}`, registered by the framework) say nothing about this path.
    if (!layer.route || layer.route.path.includes('*') || !layer.match(req.path)) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  if (methods.size) methods.add('OPTIONS');
  return [...methods].sort();
}
