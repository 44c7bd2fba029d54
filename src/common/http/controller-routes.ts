import { PATH_METADATA } from '@nestjs/common/constants.js';
import type { ModulesContainer } from '@nestjs/core';

/** One handler of a controller, with the paths it answers (controller path + handler path). */
export interface ControllerRoute {
  controller: new (...args: never[]) => unknown;
  /** The controller's instance, once the application is initialised. */
  instance: unknown;
  name: string;
  handler: (...args: unknown[]) => unknown;
  paths: string[];
}

const asList = (value: unknown): string[] =>
  Array.isArray(value) ? value.map(String) : value === undefined ? [''] : [String(value)];

/** `/a/b` from path segments as controllers and handlers declare them (`'a'`, `'/b/'`, `''`). */
export function joinPath(...parts: string[]): string {
  const joined = parts
    .flatMap((p) => p.split('/'))
    .filter(Boolean)
    .join('/');
  return `/${joined}`;
}

/**
 * The method names of a controller class, its own and those it inherits (a route factory's base class), each
 * once, the most derived first; `constructor` left out.
 */
export function methodNamesOf(controller: abstract new (...args: never[]) => unknown): string[] {
  const names = new Set<string>();
  for (
    let prototype = controller.prototype as object | null;
    prototype && prototype !== Object.prototype;
    prototype = Object.getPrototypeOf(prototype) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(prototype)) if (name !== 'constructor') names.add(name);
  }
  return [...names];
}

/** Every handler of the application's controllers that carries the metadata `key`. */
export function routesWith(modules: ModulesContainer, key: string): ControllerRoute[] {
  const routes: ControllerRoute[] = [];
  for (const module of modules.values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of methodNamesOf(controller)) {
        const handler = prototype[name];
        if (typeof handler !== 'function' || Reflect.getMetadata(key, handler) === undefined) continue;
        const paths: string[] = [];
        for (const base of asList(Reflect.getMetadata(PATH_METADATA, controller))) {
          for (const path of asList(Reflect.getMetadata(PATH_METADATA, handler)))
            paths.push(joinPath(base, path));
        }
        routes.push({
          controller,
          instance: wrapper.instance,
          name,
          handler: handler as (...args: unknown[]) => unknown,
          paths,
        });
      }
    }
  }
  return routes;
}
