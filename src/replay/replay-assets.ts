/**
 * The browser bundles of the replay pages, built by `tools/build-web.mjs` (part of `npm run build`) into
 * dist/web/: a script and a stylesheet per page, named by content hash, listed in dist/web/manifest.json.
 * Only files the manifest names are served; a request names them, it never reaches a path as given.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PageAssets } from './replay-pages.js';

/** The URL prefix the bundles are served under. */
export const REPLAY_ASSETS_PATH = '/replay/assets';

export type PageName = 'shared' | 'replay';

const here = dirname(fileURLToPath(import.meta.url));
/** dist/web beside the compiled module (dist/replay), or from the sources (src/replay) the built one. */
const CANDIDATES = [join(here, '..', 'web'), join(here, '..', '..', 'dist', 'web')];

export interface ReplayAsset {
  path: string;
  /** The same file gzip-compressed by the build, when there is one. */
  gzipPath: string | null;
  contentType: string;
}

export class ReplayAssets {
  /** The folder holding the bundles, or null when the player was not built. */
  readonly dir: string | null;
  private readonly manifest: Record<string, string>;
  private readonly files: Set<string>;

  constructor(candidates: string[] = CANDIDATES) {
    let dir: string | null = null;
    let manifest: Record<string, string> = {};
    for (const candidate of candidates) {
      try {
        manifest = JSON.parse(readFileSync(join(candidate, 'manifest.json'), 'utf8')) as Record<
          string,
          string
        >;
        dir = candidate;
        break;
      } catch {
        // not built there
      }
    }
    this.dir = dir;
    this.manifest = manifest;
    this.files = new Set(Object.values(manifest).filter((f) => /^[\w.-]+\.(js|css)$/.test(f)));
  }

  /** The script and stylesheet URLs of a page, or null when the player was not built. */
  page(name: PageName): PageAssets | null {
    const script = this.manifest[`${name}.js`];
    const stylesheet = this.manifest[`${name}.css`];
    if (!this.dir || !script || !stylesheet || !this.files.has(script) || !this.files.has(stylesheet))
      return null;
    return { script: `${REPLAY_ASSETS_PATH}/${script}`, stylesheet: `${REPLAY_ASSETS_PATH}/${stylesheet}` };
  }

  /** A bundle file by its name, or null for any name the manifest does not list. */
  find(file: string): ReplayAsset | null {
    if (!this.dir || !this.files.has(file)) return null;
    const path = join(this.dir, file);
    return {
      path,
      gzipPath: existsSync(`${path}.gz`) ? `${path}.gz` : null,
      contentType: file.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
    };
  }
}
