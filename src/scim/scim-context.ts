import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

/** Who a SCIM request acts for: the domain whose token it carries, and that domain's organization. */
export interface ScimContext {
  domainId: string;
  organizationId: string;
  /** The domain name: provisioned users' addresses must be of it. */
  domain: string;
  /** `…/scim/v2/<domain id>` on the origin the request came to, for `meta.location`. */
  baseUrl: string;
}

/** The request's SCIM context, set by ScimAuthGuard. */
export function scimContextOf(request: object): ScimContext | undefined {
  return (request as { scim?: ScimContext }).scim;
}

/** The SCIM context of a handler behind ScimAuthGuard. */
export const Scim = createParamDecorator((_: unknown, ctx: ExecutionContext): ScimContext => {
  const context = scimContextOf(ctx.switchToHttp().getRequest<object>());
  if (!context) throw new Error('@Scim() used on a route without ScimAuthGuard');
  return context;
});
