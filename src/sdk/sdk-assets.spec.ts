import { statSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { isSdkVersion, SDK_SCRIPTS, SdkAssets } from './sdk-assets.js';

describe('SdkAssets', () => {
  const assets = new SdkAssets();

  it('knows the installed posthog-js version and finds its dist directory', () => {
    expect(assets.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(assets.distDir).toMatch(/node_modules\/posthog-js\/dist$/);
  });

  it('every listed script exists in the installed package (an upgrade that drops one fails here)', () => {
    for (const name of SDK_SCRIPTS) {
      const stat = statSync(`${assets.distDir}/${name}`);
      expect(assets.find(name)).toEqual({
        path: `${assets.distDir}/${name}`,
        contentType: 'text/javascript; charset=utf-8',
        etag: `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`,
      });
    }
    expect(assets.find('lazy-recorder.js.map')?.contentType).toBe('application/json; charset=utf-8');
  });

  it('finds nothing outside the list, whatever the name looks like', () => {
    for (const name of [
      'surveys-preview.js',
      'module.js',
      '../package.json',
      '../../package.json',
      'lazy-recorder.js/../array.d.ts',
      './lazy-recorder.js',
      'LAZY-RECORDER.JS',
      '',
      'lazy-recorder.js\0',
    ]) {
      expect(assets.find(name)).toBeNull();
    }
  });

  it('takes the versions posthog-js releases carry, and nothing a path could hide in', () => {
    for (const version of [
      assets.version,
      '1.449.2',
      '0.0.1',
      '1.450.0-beta.1',
      '2.0.0-rc.0',
      '999999.0.0',
    ]) {
      expect(isSdkVersion(version)).toBe(true);
    }
    for (const version of [
      '',
      '1.449',
      'v1.449.2',
      '1.449.2.1',
      '01.449.2',
      '1000000.0.0',
      '1.449.2-',
      '1.449.2-beta..1',
      '1.449.2+build',
      '..',
      '../1.449.2',
      '1.449.2/..',
      '1.449.2%2F..',
      '1.449.2\\..',
      '1.449.2\0',
      ' 1.449.2',
      '1.449.2\n',
      `1.449.2-${'a'.repeat(57)}`,
    ]) {
      expect(isSdkVersion(version)).toBe(false);
    }
    expect(isSdkVersion(`1.449.2-${'a'.repeat(56)}`)).toBe(true);
  });
});
