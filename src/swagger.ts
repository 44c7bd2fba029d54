import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { SECURITY_SCHEME } from './common/auth/auth.decorators.js';
import { ErrorBodyDto } from './common/errors/error-body.dto.js';
import {
  aliasedPath,
  aliasOfPath,
  appliedRouteAliases,
  type RouteAlias,
} from './common/http/route-aliases.js';
import {
  closeResponseSchemas,
  documentErrors,
  documentPathExamples,
  documentRequestExamples,
} from './openapi-rules.js';

const DESCRIPTION = `
Organization administration and session recording API, compatible with PostHog's.

**Authentication.** Send a personal API key as \`Authorization: Bearer phx_…\`. Create one with
\`npm run cli -- keys create --email you@example.com --scopes '*'\` (the first start prints one), then use the
**Authorize** button. Each operation lists the scopes it needs (\`x-required-scopes\`); a write scope also grants
the read scope of the same object.

**Errors.** Every error has the body \`{"type", "code", "detail", "attr"}\`; \`attr\` names the offending field.

**Lists.** \`{"count", "next", "previous", "results"}\` with \`limit\` (default 100) and \`offset\`.

**Input.** JSON bodies are UTF-8, nested at most \`BODY_JSON_MAX_DEPTH\` (64) levels deep, with at most
\`API_JSON_MAX_VALUES\` (100,000) values, and read only once the key is verified. Text holding NUL
(U+0000) or an unpaired UTF-16 surrogate, in a body, query or path, is 400 \`invalid_input\` naming the field.
`.trim();

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Organization administration and session recordings API')
    .setDescription(DESCRIPTION)
    .setVersion('1.0')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'phx_ personal API key',
        description: 'Personal API key',
      },
      SECURITY_SCHEME,
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorBodyDto] });
  // Every operation can fail unexpectedly; say so once here rather than on every handler.
  const serverError = {
    description: 'Server error (500) or database unavailable (503); the detail carries no internals.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBodyDto' } } },
  };
  // Requests with a key are rate limited per key (when RATE_LIMIT_ENABLED), and per address after failed
  // authentications (API_AUTH_FAILURE_LIMIT).
  const throttled = {
    description:
      'Rate limit of the API key exceeded, or too many failed authentications from the client address lately (`throttled`); `Retry-After` gives the seconds to wait. Every answer to a keyed request carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` when rate limits are on.',
    headers: {
      'Retry-After': { description: 'Seconds until a request fits again.', schema: { type: 'integer' } },
    },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBodyDto' } } },
  };
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if (operation && typeof operation === 'object' && 'responses' in operation) {
        const responses = operation.responses as Record<string, unknown>;
        if ('x-required-scopes' in operation) responses['429'] ??= throttled;
        responses['5XX'] ??= serverError;
      }
    }
  }
  documentAliases(document, appliedRouteAliases());
  documentErrors(document);
  closeResponseSchemas(document);
  documentRequestExamples(document);
  documentPathExamples(document);
  return document;
}

/**
 * The operations of a route with an alias (src/common/http/route-aliases.ts) appear once per path, and Swagger
 * numbers their ids (`list[0]`, `list[1]`): the original keeps its plain id, the twin gets the alias's last
 * segment appended (`SessionRecordingsController_list_environments`), `x-alias-of` naming the original, and a
 * description saying what it is.
 */
function documentAliases(document: OpenAPIObject, aliases: readonly RouteAlias[]): void {
  // The operations that have a twin, as `METHOD path`: only their numbers are removed.
  const twinned = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    const alias = aliasOfPath(path, aliases);
    if (alias) for (const method of Object.keys(item)) twinned.add(`${method} ${aliasedPath(path, alias)}`);
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      if (!operation || typeof operation !== 'object' || !('operationId' in operation)) continue;
      const op = operation as { operationId: string; description?: string; 'x-alias-of'?: string };
      const numbered = /^(.+)\[\d+\]$/.exec(op.operationId);
      const alias = aliasOfPath(path, aliases);
      if (!numbered && !alias) continue;
      const base = numbered ? numbered[1] : op.operationId;
      if (!alias) {
        if (twinned.has(`${method} ${path}`)) op.operationId = base;
        continue;
      }
      op.operationId = `${base}_${alias.alias.split('/').filter(Boolean).pop()}`;
      op['x-alias-of'] = base;
      const original = `${method.toUpperCase()} ${aliasedPath(path, alias)}`;
      op.description = [`${alias.description} The same operation as \`${original}\`.`, op.description]
        .filter(Boolean)
        .join('\n\n');
    }
  }
}

/** Swagger UI at /docs and the document at /docs-json; `GET /` redirects to /docs. */
export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    swaggerOptions: { persistAuthorization: true },
  });
  // The service's root has nothing of its own: a browser opening it lands on the API documentation.
  const http = app.getHttpAdapter();
  const toDocs = (_req: unknown, res: { redirect(status: number, url: string): void }) =>
    res.redirect(302, '/docs');
  http.get('/', toDocs);
  http.head('/', toDocs);
}
