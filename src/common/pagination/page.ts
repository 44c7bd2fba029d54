import { ApiError } from '../errors/api-error.js';

/** What a service returns for a list: one page of items and the total number of matching rows. */
export interface Page<T> {
  items: T[];
  total: number;
  /**
   * Set when the page ended before `limit` items while more match (a bound on its bytes): the offset of the
   * first item left out, where `next` starts.
   */
  nextOffset?: number;
}

export interface PageParams {
  limit: number;
  offset: number;
}

export interface Envelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export const DEFAULT_PAGE_LIMIT = 100;

function parseNonNegativeInt(raw: unknown, name: 'limit' | 'offset'): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw.trim())) {
    throw ApiError.validation(`'${name}' must be a non-negative integer.`, name);
  }
  const value = Number(raw.trim());
  if (!Number.isSafeInteger(value)) throw ApiError.validation(`'${name}' is too large.`, name);
  return value;
}

/** Validates `limit`/`offset` from a query string (docs/decisions.md §2); throws 400 naming the parameter. */
export function parsePageParams(query: Record<string, unknown>, maxLimit: number): PageParams {
  const limit = parseNonNegativeInt(query.limit, 'limit') ?? Math.min(DEFAULT_PAGE_LIMIT, maxLimit);
  if (limit < 1 || limit > maxLimit) {
    throw ApiError.validation(`'limit' must be between 1 and ${maxLimit}.`, 'limit');
  }
  const offset = parseNonNegativeInt(query.offset, 'offset') ?? 0;
  return { limit, offset };
}

/**
 * The `next`/`previous` links of a page: the request URL with `limit` and `offset` set and every other query
 * parameter kept; null when there is no such page.
 */
export function pageLinks(
  requestUrl: URL,
  { limit, offset }: PageParams,
  count: number,
): { next: string | null; previous: string | null } {
  const at = (newOffset: number): string => {
    const url = new URL(requestUrl.href);
    url.searchParams.set('limit', String(limit));
    url.searchParams.set('offset', String(newOffset));
    return url.href;
  };
  return {
    next: offset + limit < count ? at(offset + limit) : null,
    previous: offset > 0 ? at(Math.max(0, Math.min(offset - limit, count - limit))) : null,
  };
}

export function toEnvelope<T>(page: Page<T>, params: PageParams, requestUrl: URL): Envelope<T> {
  const links = pageLinks(requestUrl, params, page.total);
  if (page.nextOffset !== undefined) {
    // A page ended early: the next one starts at its first item left out, with the same limit.
    const short = { ...params, limit: page.nextOffset - params.offset };
    const next = pageLinks(requestUrl, short, page.total).next;
    links.next = next === null ? null : withLimit(next, params.limit);
  }
  return { count: page.total, ...links, results: page.items };
}

function withLimit(href: string, limit: number): string {
  const url = new URL(href);
  url.searchParams.set('limit', String(limit));
  return url.href;
}

/** PostHog's page-number envelope (activity logs): `{results, next, previous, total_count}`. */
export interface PageNumberEnvelope<T> {
  results: T[];
  next: string | null;
  previous: string | null;
  total_count: number;
}

function parsePositiveInt(raw: unknown, name: 'limit' | 'page'): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw.trim())) {
    throw ApiError.validation(`'${name}' must be a positive integer.`, name);
  }
  const value = Number(raw.trim());
  if (!Number.isSafeInteger(value) || value < 1) {
    throw ApiError.validation(`'${name}' must be a positive integer.`, name);
  }
  return value;
}

/**
 * Validates PostHog's page-number parameters: `page` (from 1, default 1) and `limit` (1 to `maxLimit`, default
 * `defaultLimit`); returns them as the limit/offset a service takes. Throws 400 naming the parameter.
 */
export function parsePageNumberParams(
  query: Record<string, unknown>,
  maxLimit: number,
  defaultLimit: number,
): PageParams & { page: number } {
  const limit = parsePositiveInt(query.limit, 'limit') ?? Math.min(defaultLimit, maxLimit);
  if (limit > maxLimit) throw ApiError.validation(`'limit' must be between 1 and ${maxLimit}.`, 'limit');
  const page = parsePositiveInt(query.page, 'page') ?? 1;
  const offset = (page - 1) * limit;
  if (!Number.isSafeInteger(offset)) throw ApiError.validation(`'page' is too large.`, 'page');
  return { limit, offset, page };
}

/** The page-number envelope of a page: links to `page ± 1` (other parameters kept), null past either end. */
export function toPageNumberEnvelope<T>(
  page: Page<T>,
  params: PageParams & { page: number },
  requestUrl: URL,
): PageNumberEnvelope<T> {
  const at = (n: number): string => {
    const url = new URL(requestUrl.href);
    url.searchParams.set('page', String(n));
    url.searchParams.set('limit', String(params.limit));
    return url.href;
  };
  return {
    results: page.items,
    next: params.offset + params.limit < page.total ? at(params.page + 1) : null,
    previous: params.page > 1 ? at(params.page - 1) : null,
    total_count: page.total,
  };
}
