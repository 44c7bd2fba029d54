import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  Logger,
  Optional,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiError } from '../errors/api-error.js';
import { runAsKeyLookup } from '../../database/pool-shares.js';
import {
  PROJECT_SECRET_KEY,
  PROJECT_SECRET_PREFIX,
  PUBLIC_KEY,
  REQUIRED_SCOPES_KEY,
} from './auth.decorators.js';
import { AuthFailureThrottle } from './auth-failure-throttle.js';
import { PresentedSecret } from './presented-secret.js';
import {
  API_KEY_VERIFIER,
  type ApiKeyVerifier,
  type Principal,
  type ProjectCredential,
  PROJECT_SECRET_VERIFIER,
  type ProjectSecretVerifier,
} from './principal.js';
import { missingScope, type Scope } from './scopes.js';

/** Extracts the secret of an `Authorization: Bearer <secret>` header; undefined when there is no header. */
export function bearerSecret(header: string | undefined): string | null | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** What a route declares about its access: `@Public`, `@RequireScopes`, `@AcceptsProjectSecret`. */
interface RoutePolicy {
  isPublic: boolean | undefined;
  required: Scope[] | undefined;
  acceptsProjectSecret: boolean;
}

/**
 * The one global guard: authenticates the bearer key and checks the handler's declared scopes. A handler
 * declaring neither `@RequireScopes` nor `@Public` is refused (fail closed). It runs before the body of an `/api`
 * request is read (`ApiBodyInterceptor`), so nothing of a request without a valid key is parsed. An address
 * that failed to authenticate too often lately gets 429 without its key being looked up, unless the key
 * authenticated on this process within the last hour (`AuthFailureThrottle`). On an `@AcceptsProjectSecret`
 * handler a `phs_…` secret is a project secret credential, authenticated and scope-checked the same way (an unknown
 * one counts as a failure), and left in the request instead of a principal.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger(ApiKeyGuard.name);
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- handlers and controller classes
  private readonly policies = new WeakMap<Function, WeakMap<Function, RoutePolicy>>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(API_KEY_VERIFIER) private readonly verifier: ApiKeyVerifier,
    private readonly failures: AuthFailureThrottle,
    // Absent in an application without the project secret API keys feature: every `phs_` secret is then 401.
    @Optional() @Inject(PROJECT_SECRET_VERIFIER) private readonly projectSecrets?: ProjectSecretVerifier,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const { isPublic, required, acceptsProjectSecret } = this.policyOf(context);
    if (isPublic && !required) return true;
    if (!required || isPublic) {
      this.logger.error(
        `${context.getClass().name}.${context.getHandler().name} must declare exactly one of @RequireScopes or @Public`,
      );
      throw ApiError.permissionDenied('This operation declares no access policy and is refused.');
    }

    const request = context.switchToHttp().getRequest<Request & { principal?: Principal }>();
    const value = bearerSecret(request.headers.authorization);
    if (value === undefined) throw ApiError.notAuthenticated();
    // One digest of the secret for the lookup and the failure throttle, computed when first needed.
    const secret = value === null ? null : new PresentedSecret(value);
    const address = request.ip ?? request.socket.remoteAddress ?? 'unknown';
    const blocked = this.failures.blockedFor(address);
    if (blocked && (secret === null || !this.failures.knownValid(secret))) throw ApiError.throttled(blocked);
    if (secret === null) {
      this.failures.recordFailure(address);
      throw ApiError.authenticationFailed('Invalid Authorization header: expected "Bearer <key>".');
    }
    if (secret.value.startsWith(PROJECT_SECRET_PREFIX) && acceptsProjectSecret) {
      const credential = (await runAsKeyLookup(() => this.projectSecrets?.verify(secret))) ?? null;
      this.checkAuthenticated(credential, secret, address, required);
      (request as { projectCredential?: ProjectCredential }).projectCredential = credential;
      return true;
    }
    // The lookup keeps the statement timeout its connection has (up to the base one): no SET (pool-shares.ts).
    const principal = await runAsKeyLookup(() => this.verifier.verify(secret));
    this.checkAuthenticated(principal, secret, address, required);
    request.principal = principal;
    return true;
  }

  /**
   * The route's declarations, read from its decorators once per handler and class (they do not change once the
   * application runs), not on every request.
   */
  private policyOf(context: ExecutionContext): RoutePolicy {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byClass = this.policies.get(handler);
    if (!byClass) this.policies.set(handler, (byClass = new WeakMap()));
    let policy = byClass.get(controller);
    if (!policy) {
      const targets = [handler, controller];
      policy = {
        isPublic: this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_KEY, targets),
        required: this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES_KEY, targets),
        acceptsProjectSecret: Boolean(this.reflector.get<boolean | undefined>(PROJECT_SECRET_KEY, handler)),
      };
      byClass.set(controller, policy);
    }
    return policy;
  }

  /**
   * 401 (counted against the address) when the secret authenticated nothing; else remembers it as valid, and 403
   * when its scopes miss one the route requires.
   */
  private checkAuthenticated<T extends { scopes: readonly string[] }>(
    found: T | null,
    secret: PresentedSecret,
    address: string,
    required: Scope[],
  ): asserts found is T {
    if (!found) {
      this.failures.recordFailure(address);
      this.failures.forgetValid(secret);
      throw ApiError.authenticationFailed();
    }
    this.failures.recordValid(secret);
    const missing = missingScope(found.scopes, required);
    if (missing) throw ApiError.permissionDenied(`API key missing required scope '${missing}'`);
  }
}
