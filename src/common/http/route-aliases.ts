import type { DynamicModule, ForwardReference, Type } from '@nestjs/common';
import { MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { joinPath, methodNamesOf } from './controller-routes.js';

/**
 * A second path prefix for every route under another: a route at `${under}/…` also answers at `${alias}/…`,
 * the same handler with the same guard, scopes, pipes and interceptors (PostHog serves its project routes under
 * `/api/environments/:id/` too). Declared in a feature's manifest (`routeAliases`).
 */
export interface RouteAlias {
  /** The prefix of the routes that get a twin, e.g. `/api/projects` (the prefix alone gets none). */
  under: string;
  /** The twin's prefix, e.g. `/api/environments`. */
  alias: string;
  /** One sentence for the twins' Swagger descriptions: what the alias path is. */
  description: string;
}

const APPLIED: RouteAlias[] = [];

const asList = (value: unknown): string[] =>
  Array.isArray(value) ? value.map(String) : value === undefined ? [''] : [String(value)];

const segments = (path: string): string[] => joinPath(path).split('/').filter(Boolean);

/** Whether the segments `prefix` start `path`. */
const startsWith = (path: string[], prefix: string[]): boolean => prefix.every((s, i) => path[i] === s);

/** `path` (a controller's or handler's, as declared) with `alias.under` replaced by `alias.alias`, or null. */
function twinOf(path: string, alias: RouteAlias): string | null {
  const parts = segments(path);
  const under = segments(alias.under);
  if (parts.length <= under.length || !startsWith(parts, under)) return null;
  return joinPath(alias.alias, ...parts.slice(under.length));
}

/** `paths` with the twins of those under the alias, each once (applying it again changes nothing). */
function withTwins(paths: string[], alias: RouteAlias): string[] {
  const out = [...paths];
  for (const path of paths) {
    const twin = twinOf(path, alias);
    if (twin && !out.some((p) => joinPath(p) === twin)) out.push(twin);
  }
  return out;
}

/**
 * Adds the twins of the aliased routes of every controller to its path metadata, which Nest's router and
 * Swagger both read, so the twins are real routes and documented operations. A controller declared under the
 * prefix (`@Controller('api/projects/:project_id/events')`) gets a second controller path; a controller at the
 * root (or at `/api`) gets a second path on each handler under the prefix. A controller path that is a part of
 * the prefix but not of the alias (`@Controller('api/projects')` with `@Get(':id')`) cannot be given a twin
 * without also aliasing its other routes: the boot fails and says so.
 */
export function applyRouteAliases(controllers: Iterable<object>, aliases: readonly RouteAlias[]): void {
  for (const alias of aliases) {
    if (!APPLIED.some((a) => a.under === alias.under && a.alias === alias.alias)) APPLIED.push(alias);
    const under = segments(alias.under);
    const twin = segments(alias.alias);
    for (const controller of controllers) {
      const bases = asList(Reflect.getMetadata(PATH_METADATA, controller));
      const withBaseTwins = withTwins(bases, alias);
      if (withBaseTwins.length > bases.length)
        Reflect.defineMetadata(PATH_METADATA, withBaseTwins, controller);
      const prototype = (controller as { prototype: Record<string, unknown> }).prototype;
      for (const name of methodNamesOf(controller as abstract new () => unknown)) {
        const handler = prototype[name];
        if (typeof handler !== 'function') continue;
        const declared = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (declared === undefined) continue;
        const paths = asList(declared);
        const added: string[] = [];
        for (const base of bases) {
          const baseParts = segments(base);
          // A base under the prefix was given its twin above; one elsewhere has nothing to alias.
          if (!startsWith(under, baseParts)) continue;
          for (const path of paths) {
            const full = joinPath(base, path);
            if (!twinOf(full, alias)) continue;
            if (!startsWith(twin, baseParts)) {
              throw new Error(
                `${(controller as { name: string }).name}.${name} answers ${full}, under ${alias.under}, but ` +
                  `its controller path ${joinPath(base)} is not a prefix of ${alias.alias}: declare the ` +
                  `controller at ${alias.under}/… or at the root`,
              );
            }
            const twinFull = twinOf(full, alias)!;
            added.push(joinPath(...segments(twinFull).slice(baseParts.length)));
          }
        }
        if (added.length) {
          const all = [...paths];
          for (const path of added) if (!all.some((p) => joinPath(p) === path)) all.push(path);
          Reflect.defineMetadata(PATH_METADATA, all.length === 1 ? all[0] : all, handler);
        }
      }
    }
  }
}

/** The alias whose prefix starts `path` (an OpenAPI or Express path), or undefined. */
export function aliasOfPath(path: string, aliases: readonly RouteAlias[]): RouteAlias | undefined {
  return aliases.find((a) => twinOf(path, { ...a, under: a.alias }) !== null);
}

/** The path a twin stands for: `path` with the alias's prefix replaced by the one it aliases. */
export function aliasedPath(path: string, alias: RouteAlias): string {
  return twinOf(path, { ...alias, under: alias.alias, alias: alias.under }) ?? path;
}

/** The aliases applied so far in this process (their twins are in the controllers' metadata). */
export function appliedRouteAliases(): readonly RouteAlias[] {
  return APPLIED;
}

type ModuleRef = Type | DynamicModule | ForwardReference | Promise<DynamicModule> | undefined;

/**
 * The controllers of these modules and of every module they import, as Nest will find them (a module given
 * as a promise is not awaited: none of the features' is).
 */
export function controllersOf(modules: readonly ModuleRef[]): Set<Type> {
  const controllers = new Set<Type>();
  const seen = new Set<unknown>();
  const visit = (ref: ModuleRef): void => {
    if (!ref || ref instanceof Promise) return;
    const module = 'forwardRef' in ref ? (ref.forwardRef() as ModuleRef) : ref;
    if (!module || module instanceof Promise || seen.has(module)) return;
    seen.add(module);
    const type = 'module' in module ? module.module : (module as Type);
    const dynamic = 'module' in module ? module : undefined;
    const own = [
      ...((Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, type) as Type[] | undefined) ?? []),
      ...(dynamic?.controllers ?? []),
    ];
    for (const controller of own) controllers.add(controller);
    const imports = [
      ...((Reflect.getMetadata(MODULE_METADATA.IMPORTS, type) as ModuleRef[] | undefined) ?? []),
      ...((dynamic?.imports as ModuleRef[] | undefined) ?? []),
    ];
    for (const imported of imports) visit(imported);
  };
  for (const module of modules) visit(module);
  return controllers;
}
