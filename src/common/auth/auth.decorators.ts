import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse, ApiSecurity, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorBodyDto } from '../errors/error-body.dto.js';
import type { Principal, ProjectCredential } from './principal.js';
import type { Scope } from './scopes.js';

export const REQUIRED_SCOPES_KEY = 'auth:requiredScopes';
export const PUBLIC_KEY = 'auth:public';
export const PROJECT_SECRET_KEY = 'auth:projectSecret';
/** Prefix of project secret API tokens (`phs_…`). */
export const PROJECT_SECRET_PREFIX = 'phs_';
/** Name of the security scheme in the OpenAPI document. */
export const SECURITY_SCHEME = 'PersonalApiKey';

/**
 * Declares that a handler needs a valid personal API key holding every listed scope. With no scope listed,
 * any valid key is enough (introspection such as `/api/users/@me`). Also documents the requirement in Swagger
 * (security requirement and an `x-required-scopes` extension) so the docs cannot drift from the code.
 */
export function RequireScopes(...scopes: Scope[]): MethodDecorator & ClassDecorator {
  const missingScopeExample = scopes[0] ?? 'organization:read';
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPES_KEY, scopes),
    ApiSecurity(SECURITY_SCHEME, scopes),
    ApiExtension('x-required-scopes', scopes),
    ApiUnauthorizedResponse({ description: 'Missing, unknown or revoked API key.', type: ErrorBodyDto }),
    ApiForbiddenResponse({
      description: scopes.length
        ? `The key lacks a required scope (\`API key missing required scope '${missingScopeExample}'\`), the key is restricted to other organizations or projects, or the caller's membership level is insufficient.`
        : 'The caller is not allowed to perform this action.',
      type: ErrorBodyDto,
    }),
  );
}

/**
 * Declares that a `@RequireScopes` handler also takes a project secret credential (`Authorization: Bearer phs_…`:
 * a project secret API key, or the project's own secret API token) in place of a personal API key. The guard
 * authenticates it (401 for an unknown one, counted as a failed authentication), checks its scopes against the
 * route's, and leaves it in the request (`projectCredentialOf`) instead of a principal; the per-key rate limit
 * counts its requests as any key's.
 */
export function AcceptsProjectSecret(): MethodDecorator {
  return SetMetadata(PROJECT_SECRET_KEY, true);
}

/** The project secret credential the guard authenticated on an `@AcceptsProjectSecret` handler; else undefined. */
export function projectCredentialOf(request: object): ProjectCredential | undefined {
  return (request as { projectCredential?: ProjectCredential }).projectCredential;
}

/** Declares that a handler needs no API key. */
export function Public(): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(PUBLIC_KEY, true), ApiSecurity({}));
}

/** The authenticated caller (only on handlers with `@RequireScopes`). */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<{ principal?: Principal }>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route without @RequireScopes');
  return principal;
});
