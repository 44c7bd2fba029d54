import { randomBytes } from 'node:crypto';
import { parseIntId } from '../common/validation/ids.js';
import { violation, violationError } from '../common/validation/violation.js';

/** Longest `name` and `derived_name`, as PostHog's columns. */
export const PLAYLIST_NAME_MAX_LENGTH = 400;
/** Largest saved `filters`, as JSON text (UTF-8 bytes). */
export const PLAYLIST_FILTERS_MAX_BYTES = 16_384;
/** Most recordings pinned to one playlist (docs/limits-api.md). */
export const PLAYLIST_MAX_PINS = 1000;
/** Length of a `short_id`, as PostHog's. */
export const SHORT_ID_LENGTH = 8;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random `short_id`: 8 alphanumeric characters (no bias: bytes of 248 and above are drawn again). */
export function newShortId(): string {
  let out = '';
  while (out.length < SHORT_ID_LENGTH) {
    for (const byte of randomBytes(SHORT_ID_LENGTH * 2)) {
      if (byte < 248 && out.length < SHORT_ID_LENGTH) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}

/** Whether a `short_id` path segment can name a playlist (anything else is 404 without a query). */
export function isShortId(value: string): boolean {
  return value.length > 0 && value.length <= 12 && /^[0-9A-Za-z]+$/.test(value);
}

/** Whether a filters value, written as JSON, fits PLAYLIST_FILTERS_MAX_BYTES (a non-object is left to IsObject). */
export function filtersWithinLimit(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Buffer.byteLength(JSON.stringify(value), 'utf8') <= PLAYLIST_FILTERS_MAX_BYTES;
}

/** The list's query parameters, as the query string gives them. */
export interface PlaylistListQuery {
  pinned?: unknown;
  created_by?: unknown;
  search?: unknown;
  type?: unknown;
}

/** Longest `search` accepted. */
export const PLAYLIST_SEARCH_MAX_LENGTH = 400;

/** The list's filters from its query; a bad value is a 400 naming the parameter. */
export function parsePlaylistListQuery(query: PlaylistListQuery): {
  pinned?: boolean;
  createdById?: number;
  search?: string;
  type?: 'collection' | 'filters';
} {
  const out: { pinned?: boolean; createdById?: number; search?: string; type?: 'collection' | 'filters' } =
    {};
  if (query.type !== undefined) {
    if (query.type !== 'collection' && query.type !== 'filters') {
      throw violationError(violation("'type' must be collection or filters.", 'type'));
    }
    out.type = query.type;
  }
  if (query.pinned !== undefined) {
    if (query.pinned !== 'true' && query.pinned !== 'false') {
      throw violationError(violation("'pinned' must be true or false.", 'pinned'));
    }
    out.pinned = query.pinned === 'true';
  }
  if (query.created_by !== undefined) {
    const id = typeof query.created_by === 'string' ? parseIntId(query.created_by) : null;
    if (id === null)
      throw violationError(violation("'created_by' must be a user id (an integer).", 'created_by'));
    out.createdById = id;
  }
  if (query.search !== undefined) {
    if (typeof query.search !== 'string' || query.search.length > PLAYLIST_SEARCH_MAX_LENGTH) {
      throw violationError(
        violation(`'search' must be one text of at most ${PLAYLIST_SEARCH_MAX_LENGTH} characters.`, 'search'),
      );
    }
    if (query.search.trim()) out.search = query.search.trim();
  }
  return out;
}
