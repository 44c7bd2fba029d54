import { describe, expect, it } from '@jest/globals';
import { redactUrl } from './redact-url.js';

describe('redactUrl', () => {
  it.each([
    ['/api/shared/AbC-123_xyz', '/api/shared/[redacted]'],
    ['/api/shared/AbC-123_xyz/', '/api/shared/[redacted]/'],
    ['/api/shared/AbC-123_xyz/snapshots', '/api/shared/[redacted]/snapshots'],
    [
      '/api/shared/AbC-123_xyz/snapshots?source=blob_v2&blob_key=k1',
      '/api/shared/[redacted]/snapshots?source=blob_v2&blob_key=k1',
    ],
    ['/api/shared/AbC?x=1', '/api/shared/[redacted]?x=1'],
    ['/api/shared/AbC#frag', '/api/shared/[redacted]#frag'],
    ['/shared/AbC-123', '/shared/[redacted]'],
    ['/shared/AbC-123?t=12', '/shared/[redacted]?t=12'],
    ['/embedded/AbC-123', '/embedded/[redacted]'],
    ['/embedded/AbC-123/', '/embedded/[redacted]/'],
    ['/API/Shared/AbC', '/API/Shared/[redacted]'],
    ['//api//shared//AbC/snapshots', '//api//shared//[redacted]/snapshots'],
    ['/api/shared/%41bc%2Fdef', '/api/shared/[redacted]'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it.each([
    ['/replay?access_token=AbC&x=1', '/replay?access_token=[redacted]&x=1'],
    ['/x?a=1&sharing_access_token=AbC', '/x?a=1&sharing_access_token=[redacted]'],
    ['/x?Share_Token=AbC#f', '/x?Share_Token=[redacted]#f'],
    ['/x?access%5Ftoken=AbC', '/x?access%5Ftoken=[redacted]'],
    ['/x?access+token=AbC&ACCESS_TOKEN=d', '/x?access+token=AbC&ACCESS_TOKEN=[redacted]'],
    ['/x?access_%74oken=AbC', '/x?access_%74oken=[redacted]'],
    // The Kelvin sign lower-cases to `k`: the name is `access_token` once lower-cased.
    ['/x?access_to\u212Aen=AbC', '/x?access_to\u212Aen=[redacted]'],
  ])('redacts secret query parameters: %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it.each([
    '/api/organizations/0b7c/invites?limit=10',
    '/api/projects/1/session_recordings/abc/sharing',
    '/api/projects/1/session_recordings/abc/snapshots?blob_key=shared',
    '/s/?compression=gzip-js&ver=1.2',
    '/e/?compression=gzip-js&ver=1.200.0',
    '/x?tokens=1&my_token=2',
    '/sharedx/abc',
    '/api/sharedthing/abc',
    '/shared',
    '/shared/',
    '/x?access_token',
    '/x?%E0%A4%A=1',
    '',
  ])('leaves %j alone', (url) => {
    expect(redactUrl(url)).toBe(url);
  });

  it('handles absolute URLs (Referer headers), keeping the origin', () => {
    expect(redactUrl('https://rec.example.com/embedded/AbC?t=1')).toBe(
      'https://rec.example.com/embedded/[redacted]?t=1',
    );
    expect(redactUrl('http://127.0.0.1:3000/shared/AbC')).toBe('http://127.0.0.1:3000/shared/[redacted]');
    expect(redactUrl('https://example.com/shared/AbC')).not.toContain('AbC');
    expect(redactUrl('https://example.com/pricing')).toBe('https://example.com/pricing');
  });

  it('accepts a missing url', () => {
    expect(redactUrl(undefined)).toBe('');
    expect(redactUrl(null)).toBe('');
  });
});
