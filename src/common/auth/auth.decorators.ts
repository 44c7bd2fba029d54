import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse, ApiSecurity, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorBodyDto } from '../errors/error-body.dto.js';
import type { Principal } from './principal.js';
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
 * Declares that a `@RequireScopes` handler also takes a project secret API token (`Authorization: Bearer phs_…`)
 * in place of a personal API key: the guard then leaves the token, unchecked, in the request (`projectSecretOf`)
 * for the handler to authenticate against its project (401 when no project has it), and sets no principal.
 */
export function AcceptsProjectSecret(): MethodDecorator {
  return SetMetadata(PROJECT_SECRET_KEY, true);
}

/** The project secret token the guard let through on an `@AcceptsProjectSecret` handler; undefined otherwise. */
export function projectSecretOf(request: object): string | undefined {
  return (request as { projectSecret?: string }).projectSecret;
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
