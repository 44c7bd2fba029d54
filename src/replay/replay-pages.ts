/**
 * The HTML of the replay pages and their content security policies. The pages are shells: the player and the
 * recordings browser are the bundles under dist/web (see `ReplayAssets`), loaded from this service only.
 */
import { createHash } from 'node:crypto';

/** What a share page tells its script about the recording: times and the start URL, never its person. */
export interface SharedRecordingFacts {
  start_time: string;
  end_time: string;
  recording_duration: number;
  start_url: string | null;
}

export interface PageAssets {
  script: string;
  stylesheet: string;
}

/**
 * The policy of the player pages, and why each source is there:
 * - scripts and the page's own styles come from this origin only (`'self'`), no inline script, no eval;
 * - the replayed page is drawn in a sandboxed frame without scripts, whose document inherits this policy: its
 *   styles are inline `<style>` elements and style attributes (`'unsafe-inline'` for styles only), and its
 *   images, fonts, media and any stylesheet it could not inline are loaded from wherever the recorded site
 *   loaded them (`http:`/`https:`, and `data:`/`blob:` URLs the recorder kept);
 * - requests (`connect-src`) go to this origin's API only; no plugins, no forms, no `<base>`;
 * - `frame-ancestors`: `'none'` (the page cannot be framed), or `*` for the embeddable page.
 */
export function playerCsp(frameAncestors: "'none'" | '*'): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline' http: https:",
    "img-src 'self' data: blob: http: https:",
    "font-src 'self' data: http: https:",
    "media-src 'self' data: blob: http: https:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}

/**
 * The look of the plain pages: the player's colours and type, so a dead share link looks like the page it
 * replaces. Inline, allowed by its hash alone (no stylesheet to load, nothing else inline may style the page).
 */
const PLAIN_PAGE_STYLE =
  'html{height:100%;background:#1d1f27;color:#f5f5f7;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}' +
  'body{min-height:100%;margin:0;display:flex;align-items:center;justify-content:center}' +
  'main{max-width:36rem;margin:1.5rem;padding:1.5rem 2rem;background:#0f1015;border:1px solid #3b3e4a;border-left:4px solid #f54e00;border-radius:6px}' +
  'h1{margin:0 0 .5rem;font-size:1.3rem}p{margin:0;color:#b8bac4}';

const PLAIN_PAGE_STYLE_HASH = `'sha256-${createHash('sha256').update(PLAIN_PAGE_STYLE).digest('base64')}'`;

/** The policy of the plain pages (not found, not built): no script, only their own inline style, nothing loaded. */
export function plainPageCsp(frameAncestors: "'none'" | '*'): string {
  return `default-src 'none'; style-src ${PLAIN_PAGE_STYLE_HASH}; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors ${frameAncestors}`;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * JSON that is safe inside a `<script type="application/json">` element: `<`, `>` and `&` are written as
 * escapes, so no value (a start URL holding `</script>`, say) can end the element.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function shell(title: string, assets: PageAssets, bodyClass: string, data: unknown | null): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex, nofollow">
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="${escapeHtml(assets.stylesheet)}">
${data === null ? '' : `    <script type="application/json" id="recording-data">${jsonForScript(data)}</script>\n`}    <script type="module" src="${escapeHtml(assets.script)}"></script>
  </head>
  <body class="${bodyClass}">
    <main id="app"><noscript>This page needs JavaScript to play the recording.</noscript></main>
  </body>
</html>
`;
}

/** `/shared/:access_token` (with the recording's facts) and `/embedded/:access_token` (the player only). */
export function sharedRecordingPage(
  assets: PageAssets,
  accessToken: string,
  recording: SharedRecordingFacts,
  embedded: boolean,
): string {
  const facts: SharedRecordingFacts = {
    start_time: recording.start_time,
    end_time: recording.end_time,
    recording_duration: recording.recording_duration,
    start_url: recording.start_url,
  };
  return shell('Session recording', assets, embedded ? 'embedded' : 'shared', {
    access_token: accessToken,
    embedded,
    recording: facts,
  });
}

/** `/replay`: the recordings browser. */
export function recordingsBrowserPage(assets: PageAssets): string {
  return shell('Session recordings', assets, 'replay', null);
}

/** A page without script, in the player's colours: a heading and a sentence. */
export function plainPage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex, nofollow">
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="data:,">
    <style>${PLAIN_PAGE_STYLE}</style>
  </head>
  <body class="plain">
    <main>
      <h1>${escapeHtml(title)}</h1>
      <p>${escapeHtml(message)}</p>
    </main>
  </body>
</html>
`;
}

export const NOT_FOUND_PAGE = plainPage(
  'Recording not found',
  'There is no shared recording at this address. Sharing may have been turned off, the link replaced by a new one, or the recording deleted.',
);

export const NOT_BUILT_PAGE = plainPage(
  'Player not available',
  'The recording player was not built with this service (run npm run build).',
);
