import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReplayAssets } from './replay-assets.js';
import { escapeHtml, jsonForScript, playerCsp, sharedRecordingPage } from './replay-pages.js';

describe('jsonForScript', () => {
  it('writes <, >, & and line separators as escapes, and stays the same JSON value', () => {
    const value = { url: 'https://x.example/</script><!--&\u2028\u2029', n: 1 };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('escapeHtml', () => {
  it('escapes markup and quotes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

describe('playerCsp', () => {
  it('allows scripts and requests from this origin only, and framing as asked', () => {
    for (const ancestors of ["'none'", '*'] as const) {
      const directives = new Map(
        playerCsp(ancestors)
          .split('; ')
          .map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]),
      );
      expect(directives.get('default-src')).toBe("'none'");
      expect(directives.get('script-src')).toBe("'self'");
      expect(directives.get('connect-src')).toBe("'self'");
      expect(directives.get('object-src')).toBe("'none'");
      expect(directives.get('frame-ancestors')).toBe(ancestors);
      expect(playerCsp(ancestors)).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
    }
  });
});

describe('sharedRecordingPage', () => {
  it('hands the script only the recording’s times and start URL, whatever else it is given', () => {
    const recording = {
      start_time: '2026-11-20T09:00:00.000Z',
      end_time: '2026-11-20T09:01:00.000Z',
      recording_duration: 60,
      start_url: 'https://example.com/',
      person: { name: 'Ada', properties: { email: 'ada@example.com' } },
      distinct_id: 'ada-1',
    };
    const html = sharedRecordingPage({ script: '/s.js', stylesheet: '/s.css' }, 'tok', recording, false);
    expect(html).not.toContain('ada');
    expect(html).not.toContain('Ada');
    expect(html).toContain('"start_url":"https://example.com/"');
  });
});

describe('ReplayAssets', () => {
  const built = () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-assets-'));
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({
        'shared.js': 'shared-AB12.js',
        'shared.css': 'shared-CD34.css',
        'replay.js': '../evil.js',
      }),
    );
    writeFileSync(join(dir, 'shared-AB12.js.gz'), 'gzip bytes');
    return dir;
  };

  it('serves the files the manifest names, by name only', () => {
    const dir = built();
    const assets = new ReplayAssets([join(dir, 'missing'), dir]);
    expect(assets.dir).toBe(dir);
    expect(assets.page('shared')).toEqual({
      script: '/replay/assets/shared-AB12.js',
      stylesheet: '/replay/assets/shared-CD34.css',
    });
    expect(assets.find('shared-AB12.js')).toEqual({
      path: join(dir, 'shared-AB12.js'),
      gzipPath: join(dir, 'shared-AB12.js.gz'),
      contentType: 'text/javascript; charset=utf-8',
    });
    expect(assets.find('shared-CD34.css')).toEqual({
      path: join(dir, 'shared-CD34.css'),
      gzipPath: null,
      contentType: 'text/css; charset=utf-8',
    });
    // The compressed copy is reached only through its bundle, never by its own name.
    expect(assets.find('shared-AB12.js.gz')).toBeNull();
    for (const name of ['manifest.json', '../evil.js', 'shared.js', '', 'shared-AB12.js/..']) {
      expect(assets.find(name)).toBeNull();
    }
    // A page whose manifest entry is not a plain bundle name, or missing, is not available.
    expect(assets.page('replay')).toBeNull();
  });

  it('knows when the player was not built', () => {
    const assets = new ReplayAssets([join(tmpdir(), 'no-such-build-dir')]);
    expect(assets.dir).toBeNull();
    expect(assets.page('shared')).toBeNull();
    expect(assets.find('shared-AB12.js')).toBeNull();
  });
});
