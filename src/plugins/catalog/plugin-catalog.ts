import { readFile } from 'node:fs/promises';
import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error.js';
import { Clock } from '../../common/time/clock.js';
import { isPlainObject } from '../../common/validation/violation.js';
import { AppConfig } from '../../config/config.js';
import { normaliseUrl, urlViolation } from '../rules/plugin-rules.js';

/** One plugin of the repository catalog. Keys beyond these are kept as the catalog has them. */
export interface CatalogEntry {
  name: string;
  url: string;
  description: string | null;
  icon: string | null;
  latest_tag: string | null;
  [key: string]: unknown;
}

/** The catalog shipped with the service, used when PLUGIN_REPOSITORY_URL is unset (copied into dist/ by the build). */
export const BUNDLED_CATALOG = new URL('./repository.json', import.meta.url);

export const MAX_CATALOG_ENTRIES = 10000;
/** Largest catalog document read from PLUGIN_REPOSITORY_URL. */
export const MAX_CATALOG_BYTES = 5 * 1024 * 1024;

const optionalText = (entry: Record<string, unknown>, key: string, max: number): string | null | false => {
  const value = entry[key];
  if (value === undefined || value === null) return null;
  return typeof value === 'string' && value.length <= max ? value : false;
};

/**
 * Validates a catalog document: a JSON array (at most MAX_CATALOG_ENTRIES) of objects with a non-empty `name`, an
 * http(s) `url`, and optional `description`, `icon` and `latest_tag` strings (or null). Returns the entries
 * (optional keys present, null when absent) or the first problem.
 */
export function parseCatalog(document: unknown): { entries: CatalogEntry[] } | { problem: string } {
  if (!Array.isArray(document)) return { problem: 'expected a JSON array of plugins' };
  if (document.length > MAX_CATALOG_ENTRIES) {
    return { problem: `more than ${MAX_CATALOG_ENTRIES} plugins` };
  }
  const entries: CatalogEntry[] = [];
  for (const [i, entry] of document.entries()) {
    if (!isPlainObject(entry)) return { problem: `entry ${i} is not an object` };
    if (typeof entry.name !== 'string' || entry.name.trim() === '' || entry.name.length > 200) {
      return { problem: `entry ${i} has no valid "name"` };
    }
    if (typeof entry.url !== 'string' || urlViolation('repository', entry.url)) {
      return { problem: `entry ${i} has no valid http(s) "url"` };
    }
    const description = optionalText(entry, 'description', 10000);
    const icon = optionalText(entry, 'icon', 800);
    const latestTag = optionalText(entry, 'latest_tag', 200);
    if (description === false) return { problem: `entry ${i} has an invalid "description"` };
    if (icon === false) return { problem: `entry ${i} has an invalid "icon"` };
    if (latestTag === false) return { problem: `entry ${i} has an invalid "latest_tag"` };
    entries.push({ ...entry, name: entry.name, url: entry.url, description, icon, latest_tag: latestTag });
  }
  return { entries };
}

/** The catalog entry of a record's url (urls compared in their normalised form), or null. */
export function findEntry(entries: readonly CatalogEntry[], url: string | null): CatalogEntry | null {
  if (!url) return null;
  const wanted = normaliseUrl(url);
  return entries.find((e) => normaliseUrl(e.url) === wanted) ?? null;
}

class CatalogError extends ApiError {}

const unavailable = (detail: string, code = 'repository_unavailable') =>
  new CatalogError(502, code, detail, null, 'server_error');

/**
 * The plugin repository catalog (docs/decisions.md §9): fetched from PLUGIN_REPOSITORY_URL with a timeout
 * (PLUGIN_REPOSITORY_TIMEOUT_MS) and kept for PLUGIN_REPOSITORY_CACHE_SECONDS, or, when unset, the catalog
 * shipped with the service. A catalog that cannot be fetched in time or does not validate is answered 502
 * (`repository_unavailable`, `repository_invalid`) or 504 (`repository_timeout`) and is not cached; concurrent
 * requests share one fetch.
 */
@Injectable()
export class PluginCatalog {
  private readonly logger = new Logger(PluginCatalog.name);
  private cached: { entries: CatalogEntry[]; expiresAt: number } | null = null;
  private inFlight: Promise<CatalogEntry[]> | null = null;
  private bundled: Promise<CatalogEntry[]> | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** Every entry of the catalog. */
  async entries(): Promise<CatalogEntry[]> {
    const url = this.config.get('PLUGIN_REPOSITORY_URL');
    if (!url) {
      this.bundled ??= this.readBundled().catch((err: unknown) => {
        this.bundled = null;
        throw err;
      });
      return this.bundled;
    }
    const now = this.clock.now().getTime();
    if (this.cached && this.cached.expiresAt > now) return this.cached.entries;
    this.inFlight ??= this.fetchRemote(url)
      .then((entries) => {
        const ttl = this.config.get('PLUGIN_REPOSITORY_CACHE_SECONDS') * 1000;
        this.cached = ttl > 0 ? { entries, expiresAt: this.clock.now().getTime() + ttl } : null;
        return entries;
      })
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }

  async entryFor(url: string | null): Promise<CatalogEntry | null> {
    return findEntry(await this.entries(), url);
  }

  private async readBundled(): Promise<CatalogEntry[]> {
    const result = parseCatalog(JSON.parse(await readFile(BUNDLED_CATALOG, 'utf8')) as unknown);
    if ('problem' in result) throw new Error(`the bundled plugin catalog is invalid: ${result.problem}`);
    return result.entries;
  }

  private async fetchRemote(url: string): Promise<CatalogEntry[]> {
    const timeoutMs = this.config.get('PLUGIN_REPOSITORY_TIMEOUT_MS');
    const host = new URL(url).host;
    let text: string;
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw unavailable(`The plugin repository at ${host} answered HTTP ${response.status}.`);
      }
      text = await readCapped(response, MAX_CATALOG_BYTES);
    } catch (err) {
      if (err instanceof CatalogError) {
        this.logger.warn({ host, code: err.code }, err.detail);
        throw err;
      }
      const name = (err as { name?: string }).name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        this.logger.warn({ host, timeoutMs }, 'plugin repository timed out');
        throw new CatalogError(
          504,
          'repository_timeout',
          `The plugin repository at ${host} did not answer within ${timeoutMs} ms.`,
          null,
          'server_error',
        );
      }
      this.logger.warn({ host, err: (err as Error).message }, 'plugin repository unreachable');
      throw unavailable(`The plugin repository at ${host} could not be reached.`);
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw this.invalid(host, 'not valid JSON');
    }
    const result = parseCatalog(document);
    if ('problem' in result) throw this.invalid(host, result.problem);
    return result.entries;
  }

  private invalid(host: string, problem: string): ApiError {
    this.logger.warn({ host, problem }, 'plugin repository returned an invalid catalog');
    return unavailable(
      `The plugin repository at ${host} returned an invalid catalog: ${problem}.`,
      'repository_invalid',
    );
  }
}

/** The body as text, refusing (502) one larger than `max` bytes. */
async function readCapped(response: Response, max: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await response.body?.cancel();
    throw unavailable(`The plugin repository catalog is larger than ${max} bytes.`, 'repository_invalid');
  }
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw unavailable(`The plugin repository catalog is larger than ${max} bytes.`, 'repository_invalid');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
