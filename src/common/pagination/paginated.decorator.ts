import {
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
  SetMetadata,
  type Type,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiQuery,
  getSchemaPath,
} from '@nestjs/swagger';
import { ErrorBodyDto } from '../errors/error-body.dto.js';
import type { PageParams } from './page.js';

export const PAGINATED_KEY = 'pagination:paginated';
export const PAGE_NUMBER_PAGINATED_KEY = 'pagination:pageNumber';
export const HAS_NEXT_KEY = 'pagination:hasNext';

export interface PaginatedOptions {
  /**
   * Also answer `has_next` (whether `next` is set) beside the envelope, for PostHog clients that page by it
   * (its recordings list answers `{results, has_next}`).
   */
  hasNext?: boolean;
}

/**
 * Marks a list handler: it returns `Page<T>` and the envelope interceptor wraps it as
 * `{count, next, previous, results}`. Also documents the envelope, `limit` and `offset` in Swagger.
 */
export function Paginated(
  item: Type<unknown>,
  description = 'One page of results.',
  options: PaginatedOptions = {},
): MethodDecorator {
  const hasNext = options.hasNext === true;
  return applyDecorators(
    SetMetadata(PAGINATED_KEY, true),
    SetMetadata(HAS_NEXT_KEY, hasNext),
    ApiExtraModels(item),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, default: 100 },
      description: 'Number of results per page (at most MAX_PAGE_LIMIT, 1000 by default).',
    }),
    ApiQuery({
      name: 'offset',
      required: false,
      schema: { type: 'integer', minimum: 0, default: 0 },
      description: 'Index of the first result.',
    }),
    ApiOkResponse({
      description,
      schema: {
        type: 'object',
        required: ['count', 'next', 'previous', 'results', ...(hasNext ? ['has_next'] : [])],
        properties: {
          count: { type: 'integer', example: 1 },
          next: { type: 'string', format: 'uri', nullable: true, example: null },
          previous: { type: 'string', format: 'uri', nullable: true, example: null },
          results: { type: 'array', items: { $ref: getSchemaPath(item) } },
          ...(hasNext
            ? {
                has_next: {
                  type: 'boolean',
                  example: false,
                  description: "Whether there is a next page (`next` is set): PostHog's own paging field.",
                },
              }
            : {}),
        },
      },
    }),
    ApiBadRequestResponse({ description: 'Invalid `limit` or `offset`.', type: ErrorBodyDto }),
  );
}

/**
 * Marks a list handler answering PostHog's page-number envelope `{results, next, previous, total_count}`
 * (PostHog's activity logs): `page` from 1 and `limit` (default `defaultLimit`). The handler gets the matching
 * limit/offset through `@PageQuery()` and returns `Page<T>`, as for `@Paginated`.
 */
export function PageNumberPaginated(
  item: Type<unknown>,
  defaultLimit: number,
  description = 'One page of results.',
): MethodDecorator {
  return applyDecorators(
    SetMetadata(PAGE_NUMBER_PAGINATED_KEY, defaultLimit),
    ApiExtraModels(item),
    ApiQuery({
      name: 'page',
      required: false,
      schema: { type: 'integer', minimum: 1, default: 1 },
      description: 'The page, from 1.',
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, default: defaultLimit },
      description: 'Number of results per page (at most MAX_PAGE_LIMIT, 1000 by default).',
    }),
    ApiOkResponse({
      description,
      schema: {
        type: 'object',
        required: ['results', 'next', 'previous', 'total_count'],
        additionalProperties: false,
        properties: {
          results: { type: 'array', items: { $ref: getSchemaPath(item) } },
          next: { type: 'string', format: 'uri', nullable: true, example: null },
          previous: { type: 'string', format: 'uri', nullable: true, example: null },
          total_count: { type: 'integer', example: 1 },
        },
      },
    }),
    ApiBadRequestResponse({ description: 'Invalid `page` or `limit`.', type: ErrorBodyDto }),
  );
}

/** The validated `limit`/`offset` of a `@Paginated` (or `@PageNumberPaginated`) handler. */
export const PageQuery = createParamDecorator((_: unknown, ctx: ExecutionContext): PageParams => {
  const params = ctx.switchToHttp().getRequest<{ pageParams?: PageParams }>().pageParams;
  if (!params)
    throw new Error('@PageQuery() used on a handler without @Paginated() or @PageNumberPaginated()');
  return params;
});
