import { describe, expect, it } from '@jest/globals';
import { ExportError, scrubSecrets } from '../export-errors.js';
import { s3Key, s3KeyPrefix } from './s3.js';

const START = new Date('2026-03-04T05:00:00.000Z');
const END = new Date('2026-03-04T06:00:00.000Z');

describe('S3 keys (PostHog naming)', () => {
  it('fills the template variables of the prefix from the interval end', () => {
    expect(
      s3KeyPrefix('exports/{table}/{year}-{month}-{day}/{hour}{minute}{second}', START, END, 'persons'),
    ).toBe('exports/persons/2026-03-04/060000');
    expect(s3KeyPrefix('{data_interval_start}/{data_interval_end}', START, END, 'sessions')).toBe(
      '2026-03-04T05:00:00+00:00/2026-03-04T06:00:00+00:00',
    );
  });

  it('refuses an unknown template variable (not retryable)', () => {
    let error: unknown;
    try {
      s3KeyPrefix('exports/{team}', START, END, 'persons');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ExportError);
    expect((error as ExportError).retryable).toBe(false);
    expect((error as ExportError).message).toBe('The S3 prefix uses an unknown template variable {team}.');
  });

  it('names files by interval, format, compression and file number', () => {
    expect(s3Key('a/b/', START, END, 'JSONLines', null, null)).toBe(
      'a/b/2026-03-04T05:00:00+00:00-2026-03-04T06:00:00+00:00.jsonl',
    );
    expect(s3Key('', START, END, 'JSONLines', 'gzip', null)).toBe(
      '2026-03-04T05:00:00+00:00-2026-03-04T06:00:00+00:00.jsonl.gz',
    );
    expect(s3Key('/p', START, END, 'Parquet', 'zstd', 2)).toBe(
      'p/2026-03-04T05:00:00+00:00-2026-03-04T06:00:00+00:00-2.parquet.zst',
    );
  });
});

describe('scrubSecrets', () => {
  it('masks every secret value and its URL-encoded form, and keeps the rest', () => {
    expect(
      scrubSecrets('auth failed for p@ss/word and p%40ss%2Fword at host', ['p@ss/word', null, 'abc']),
    ).toBe('auth failed for ******** and ******** at host');
  });
});
