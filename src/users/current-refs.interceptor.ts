import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { from, type Observable, switchMap } from 'rxjs';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { CurrentUserService } from './current-user.service.js';

/** The path segment that names the caller's current organization or project, as in PostHog's API. */
export const CURRENT = '@current';

interface RoutedRequest {
  params?: Record<string, string>;
  route?: { path?: unknown };
  principal?: Principal;
}

/**
 * Which path parameter of a route names an organization and which a project: `organization_id` and `project_id`
 * everywhere, and `id` on the routes of an organization or a project itself.
 */
function refKinds(routePath: string): Record<string, 'organization' | 'project'> {
  const kinds: Record<string, 'organization' | 'project'> = {
    organization_id: 'organization',
    project_id: 'project',
  };
  if (/^\/api\/organizations\/:id(\/|\{|$)/.test(routePath)) kinds.id = 'organization';
  if (
    /^\/api\/(projects|environments|organizations\/:organization_id\/projects)\/:id(\/|\{|$)/.test(routePath)
  ) {
    kinds.id = 'project';
  }
  return kinds;
}

/**
 * `@current` in place of an organization or project id (`/api/organizations/@current/members/`,
 * `/api/projects/@current/events/`), as PostHog accepts it: the caller's current organization (the one `GET
 * /api/users/@me` returns as `organization`: created or joined most recently among those the key reaches) and
 * that organization's project (`team`), or the default project of the organization the path names. Replaced by
 * the id before the route's pipes parse it, so every route treats it as that id; 404 when the caller has none.
 * Runs after the guard (the principal is known) and before the pipes, as a step of the request pipeline (the
 * users manifest's `interceptors`), before the activity log's.
 */
@Injectable()
export class CurrentRefsInterceptor implements NestInterceptor {
  constructor(private readonly currentUser: CurrentUserService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<RoutedRequest>();
    const params = request.params;
    if (context.getType() !== 'http' || !params || !Object.values(params).includes(CURRENT)) {
      return next.handle();
    }
    const principal = request.principal;
    const routePath = typeof request.route?.path === 'string' ? request.route.path : '';
    const kinds = refKinds(routePath);
    const named = Object.entries(params).filter(([name, value]) => value === CURRENT && kinds[name]);
    if (!principal || !named.length) return next.handle();
    // The route runs once the ids are in place.
    return from(this.replaceCurrent(principal, params, kinds)).pipe(switchMap(() => next.handle()));
  }

  /** Puts the ids of the caller's current organization and project in place of `@current`; 404 when none. */
  private async replaceCurrent(
    principal: Principal,
    params: Record<string, string>,
    kinds: Record<string, 'organization' | 'project'>,
  ): Promise<void> {
    const organizationParam = Object.keys(params).find((name) => kinds[name] === 'organization');
    if (organizationParam && params[organizationParam] === CURRENT) {
      const current = await this.currentUser.currentOrganizationId(principal);
      if (!current) throw ApiError.notFound();
      params[organizationParam] = current;
    }
    const projectParam = Object.keys(params).find((name) => kinds[name] === 'project');
    if (projectParam && params[projectParam] === CURRENT) {
      const project = await this.currentUser.currentProjectId(
        principal,
        organizationParam ? params[organizationParam] : undefined,
      );
      if (project === null) throw ApiError.notFound();
      params[projectParam] = String(project);
    }
  }
}
