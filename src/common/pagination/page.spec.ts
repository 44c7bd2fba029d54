import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../errors/api-error.js';
import {
  DEFAULT_PAGE_LIMIT,
  pageLinks,
  parsePageNumberParams,
  parsePageParams,
  toEnvelope,
  toPageNumberEnvelope,
} from './page.js';

/** The ApiError thrown by `fn`, failing the test when nothing (or something else) is thrown. */
function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('parsePageParams', () => {
  it('defaults to limit 100 and offset 0', () => {
    expect(DEFAULT_PAGE_LIMIT).toBe(100);
    expect(parsePageParams({}, 1000)).toEqual({ limit: 100, offset: 0 });
    expect(parsePageParams({ limit: '', offset: '' }, 1000)).toEqual({ limit: 100, offset: 0 });
  });

  it('caps the default limit at the maximum', () => {
    expect(parsePageParams({}, 20)).toEqual({ limit: 20, offset: 0 });
  });

  it('reads integer values', () => {
    expect(parsePageParams({ limit: '25', offset: '50' }, 1000)).toEqual({ limit: 25, offset: 50 });
    expect(parsePageParams({ limit: ' 7 ', offset: '0' }, 1000)).toEqual({ limit: 7, offset: 0 });
    expect(parsePageParams({ limit: '1', offset: '123456789' }, 1000)).toEqual({
      limit: 1,
      offset: 123456789,
    });
  });

  it('accepts the maximum itself', () => {
    expect(parsePageParams({ limit: '1000' }, 1000).limit).toBe(1000);
  });

  it('ignores other query parameters', () => {
    expect(parsePageParams({ search: 'x', order: '-id' }, 1000)).toEqual({ limit: 100, offset: 0 });
  });

  it.each([['abc'], ['-1'], ['1.5'], ['1e2'], ['0x10'], ['10abc']])(
    'rejects limit %j with attr limit',
    (limit) => {
      const error = apiError(() => parsePageParams({ limit }, 1000));
      expect(error.getStatus()).toBe(400);
      expect(error.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: "'limit' must be a non-negative integer.",
        attr: 'limit',
      });
    },
  );

  it.each([['abc'], ['-1'], ['1.5'], ['-0.5'], ['ten']])('rejects offset %j with attr offset', (offset) => {
    const error = apiError(() => parsePageParams({ offset }, 1000));
    expect(error.getStatus()).toBe(400);
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: "'offset' must be a non-negative integer.",
      attr: 'offset',
    });
  });

  it('rejects a repeated parameter (an array)', () => {
    expect(apiError(() => parsePageParams({ limit: ['1', '2'] }, 1000)).attr).toBe('limit');
    expect(apiError(() => parsePageParams({ offset: ['0', '10'] }, 1000)).attr).toBe('offset');
  });

  it('rejects non-string values (nested query objects, numbers)', () => {
    expect(apiError(() => parsePageParams({ limit: { a: '1' } }, 1000)).attr).toBe('limit');
    expect(apiError(() => parsePageParams({ offset: 5 }, 1000)).attr).toBe('offset');
  });

  it('rejects limit 0', () => {
    const error = apiError(() => parsePageParams({ limit: '0' }, 1000));
    expect(error.getStatus()).toBe(400);
    expect(error.attr).toBe('limit');
    expect(error.detail).toBe("'limit' must be between 1 and 1000.");
  });

  it('rejects a limit above the maximum instead of capping it', () => {
    const error = apiError(() => parsePageParams({ limit: '1001' }, 1000));
    expect(error.getStatus()).toBe(400);
    expect(error.attr).toBe('limit');
    expect(error.detail).toBe("'limit' must be between 1 and 1000.");
    expect(apiError(() => parsePageParams({ limit: '51' }, 50)).detail).toBe(
      "'limit' must be between 1 and 50.",
    );
  });

  it('rejects integers too large to represent exactly', () => {
    const error = apiError(() => parsePageParams({ offset: '99999999999999999999' }, 1000));
    expect(error.attr).toBe('offset');
    expect(error.detail).toBe("'offset' is too large.");
  });

  it('names limit before offset when both are bad', () => {
    expect(apiError(() => parsePageParams({ limit: 'x', offset: 'y' }, 1000)).attr).toBe('limit');
  });
});

describe('pageLinks', () => {
  const base = 'https://api.example.com/api/organizations/';
  const url = (query = '') => new URL(`${base}${query}`);
  /** The query of a link as a list of [name, value] pairs. */
  const params = (link: string | null) => [...new URL(link as string).searchParams.entries()];

  it('has neither link when everything fits on one page', () => {
    expect(pageLinks(url(), { limit: 100, offset: 0 }, 3)).toEqual({ next: null, previous: null });
    expect(pageLinks(url(), { limit: 100, offset: 0 }, 0)).toEqual({ next: null, previous: null });
    expect(pageLinks(url(), { limit: 3, offset: 0 }, 3)).toEqual({ next: null, previous: null });
  });

  it('has only next on the first page', () => {
    expect(pageLinks(url(), { limit: 10, offset: 0 }, 25)).toEqual({
      next: `${base}?limit=10&offset=10`,
      previous: null,
    });
  });

  it('has both in the middle', () => {
    expect(pageLinks(url('?limit=10&offset=10'), { limit: 10, offset: 10 }, 25)).toEqual({
      next: `${base}?limit=10&offset=20`,
      previous: `${base}?limit=10&offset=0`,
    });
  });

  it('has only previous on the last page', () => {
    expect(pageLinks(url('?limit=10&offset=20'), { limit: 10, offset: 20 }, 25)).toEqual({
      next: null,
      previous: `${base}?limit=10&offset=10`,
    });
  });

  it('has no next when the page ends exactly at count', () => {
    expect(pageLinks(url(), { limit: 10, offset: 10 }, 20).next).toBeNull();
  });

  it('clamps previous to offset 0 for an offset smaller than the limit', () => {
    expect(pageLinks(url('?offset=3'), { limit: 10, offset: 3 }, 25).previous).toBe(
      `${base}?offset=0&limit=10`,
    );
  });

  it('points previous at the last page when offset is beyond count', () => {
    const links = pageLinks(url('?limit=10&offset=500'), { limit: 10, offset: 500 }, 25);
    expect(links.next).toBeNull();
    expect(links.previous).toBe(`${base}?limit=10&offset=15`);
  });

  it('points previous at offset 0 when offset is beyond a count smaller than the limit', () => {
    const links = pageLinks(url('?limit=10&offset=40'), { limit: 10, offset: 40 }, 4);
    expect(links).toEqual({ next: null, previous: `${base}?limit=10&offset=0` });
    expect(pageLinks(url('?offset=5'), { limit: 10, offset: 5 }, 0).previous).toBe(
      `${base}?offset=0&limit=10`,
    );
  });

  it('keeps every other query parameter, repeated ones included, and sets limit/offset once', () => {
    const request = url('?search=acme&limit=5&tag=a&tag=b&offset=5&limit=7&order=-created_at');
    const { next, previous } = pageLinks(request, { limit: 5, offset: 5 }, 100);
    expect(params(next)).toEqual([
      ['search', 'acme'],
      ['limit', '5'],
      ['tag', 'a'],
      ['tag', 'b'],
      ['offset', '10'],
      ['order', '-created_at'],
    ]);
    expect(params(previous)).toEqual([
      ['search', 'acme'],
      ['limit', '5'],
      ['tag', 'a'],
      ['tag', 'b'],
      ['offset', '0'],
      ['order', '-created_at'],
    ]);
  });

  it('keeps encoded values and the path, scheme and host', () => {
    const next = pageLinks(url('?search=a%20b%26c&email=x%2By%40z.com'), { limit: 1, offset: 0 }, 2).next;
    const parsed = new URL(next as string);
    expect(parsed.origin).toBe('https://api.example.com');
    expect(parsed.pathname).toBe('/api/organizations/');
    expect(parsed.searchParams.get('search')).toBe('a b&c');
    expect(parsed.searchParams.get('email')).toBe('x+y@z.com');
    expect(parsed.searchParams.get('offset')).toBe('1');
  });

  it('does not modify the request URL', () => {
    const request = url('?limit=10&offset=10');
    pageLinks(request, { limit: 10, offset: 10 }, 100);
    expect(request.href).toBe(`${base}?limit=10&offset=10`);
  });
});

describe('toEnvelope', () => {
  it('wraps a page in the list envelope', () => {
    const envelope = toEnvelope(
      { items: [{ id: 3 }, { id: 4 }], total: 7 },
      { limit: 2, offset: 2 },
      new URL('http://localhost:3000/api/projects?x=1'),
    );
    expect(envelope).toEqual({
      count: 7,
      next: 'http://localhost:3000/api/projects?x=1&limit=2&offset=4',
      previous: 'http://localhost:3000/api/projects?x=1&limit=2&offset=0',
      results: [{ id: 3 }, { id: 4 }],
    });
  });

  it('uses the total, not the number of items, as count', () => {
    const envelope = toEnvelope(
      { items: [], total: 0 },
      { limit: 100, offset: 0 },
      new URL('http://h/api/x'),
    );
    expect(envelope).toEqual({ count: 0, next: null, previous: null, results: [] });
  });
});

describe('parsePageNumberParams', () => {
  it('defaults to the first page and the default limit (never above the maximum)', () => {
    expect(parsePageNumberParams({}, 1000, 10)).toEqual({ page: 1, limit: 10, offset: 0 });
    expect(parsePageNumberParams({}, 5, 10)).toEqual({ page: 1, limit: 5, offset: 0 });
  });

  it('turns page and limit into the offset', () => {
    expect(parsePageNumberParams({ page: '3', limit: '25' }, 1000, 10)).toEqual({
      page: 3,
      limit: 25,
      offset: 50,
    });
  });

  it.each([
    [{ page: '0' }, 'page'],
    [{ page: '-1' }, 'page'],
    [{ page: 'x' }, 'page'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '1001' }, 'limit'],
    [{ limit: '2.5' }, 'limit'],
  ])('refuses %j naming %s', (query, attr) => {
    let error: unknown;
    try {
      parsePageNumberParams(query, 1000, 10);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).attr).toBe(attr);
  });
});

describe('toPageNumberEnvelope', () => {
  const url = new URL('https://api.example.com/api/x/activity?page=2&limit=2&scope=Plugin');
  it('links the neighbouring pages, keeping other parameters', () => {
    expect(toPageNumberEnvelope({ items: [3, 4], total: 5 }, { page: 2, limit: 2, offset: 2 }, url)).toEqual({
      results: [3, 4],
      next: 'https://api.example.com/api/x/activity?page=3&limit=2&scope=Plugin',
      previous: 'https://api.example.com/api/x/activity?page=1&limit=2&scope=Plugin',
      total_count: 5,
    });
  });

  it('has no next on the last page and no previous on the first', () => {
    const first = toPageNumberEnvelope({ items: [1], total: 1 }, { page: 1, limit: 2, offset: 0 }, url);
    expect(first).toEqual({ results: [1], next: null, previous: null, total_count: 1 });
  });
});

describe('toEnvelope of a page that ended early (nextOffset)', () => {
  const url = new URL('https://api.example.com/api/projects/1/persons/?search=a&limit=100&offset=10');

  it('starts next at the first item left out, keeping the limit', () => {
    const envelope = toEnvelope(
      { items: [1, 2, 3], total: 50, nextOffset: 13 },
      { limit: 100, offset: 10 },
      url,
    );
    const next = new URL(envelope.next as string);
    expect(next.searchParams.get('offset')).toBe('13');
    expect(next.searchParams.get('limit')).toBe('100');
    expect(next.searchParams.get('search')).toBe('a');
    expect(envelope.previous).toBe(
      'https://api.example.com/api/projects/1/persons/?search=a&limit=100&offset=0',
    );
    expect(envelope).toMatchObject({ count: 50, results: [1, 2, 3] });
  });

  it('has no next when the first item left out is past the count', () => {
    expect(
      toEnvelope({ items: [1], total: 11, nextOffset: 11 }, { limit: 100, offset: 10 }, url).next,
    ).toBeNull();
  });
});
