import { describe, expect, it } from '@jest/globals';
import { presignGetUrl } from './presign.js';

describe('presignGetUrl', () => {
  it("signs AWS's documented example of a presigned GET (Signature Version 4, query parameters)", () => {
    const url = presignGetUrl({
      url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
      region: 'us-east-1',
      credentials: {
        accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      },
      expiresSeconds: 86400,
      now: new Date('2013-05-24T00:00:00Z'),
    });
    expect(url).toBe(
      'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
        '&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
        '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host' +
        '&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    );
  });

  it('encodes the key once per segment and signs extra parameters and a session token', () => {
    const url = new URL(
      presignGetUrl({
        url: new URL('http://127.0.0.1:9000/bucket/file_exports/1/a b.jsonl'),
        region: 'us-east-1',
        credentials: { accessKeyId: 'K', secretAccessKey: 'S', sessionToken: 'T/+=' },
        expiresSeconds: 60,
        now: new Date('2026-01-01T00:00:00Z'),
        query: { 'response-content-disposition': 'attachment; filename="x.jsonl"' },
      }),
    );
    expect(url.pathname).toBe('/bucket/file_exports/1/a%20b.jsonl');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe('T/+=');
    expect(url.searchParams.get('response-content-disposition')).toBe('attachment; filename="x.jsonl"');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });
});
