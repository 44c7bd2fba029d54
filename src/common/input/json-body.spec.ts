import { describe, expect, it } from '@jest/globals';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JsonBodyError, jsonDepthExceeds, verifyJsonBody } from './json-body.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('jsonDepthExceeds', () => {
  it('counts objects and arrays, the outermost as 1', () => {
    expect(jsonDepthExceeds(bytes('{"a":[{"b":1}]}'), 3)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":[{"b":[1]}]}'), 3)).toBe(true);
    expect(jsonDepthExceeds(bytes('[[],[],[]]'), 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds(bytes('{"a":"[[[[{{{{"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":"\\"[[[[","b":"\\\\"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":"\\\\","b":[[1]]}'), 2)).toBe(true);
  });

  it('handles a 10,000-deep body in one pass', () => {
    const deep = bytes(`${'['.repeat(10000)}${']'.repeat(10000)}`);
    expect(jsonDepthExceeds(deep, 64)).toBe(true);
  });
});

describe('verifyJsonBody', () => {
  const verify = verifyJsonBody(4);
  const run = (body: Buffer, encoding = 'utf-8') => {
    try {
      verify({} as IncomingMessage, {} as ServerResponse, body, encoding);
      return null;
    } catch (e) {
      return e as JsonBodyError;
    }
  };

  it('passes valid UTF-8 within the depth', () => {
    expect(run(bytes('{"name":"Zoë 😀"}'))).toBeNull();
    expect(run(bytes('{}'), 'UTF8')).toBeNull();
  });

  it('refuses deep bodies, invalid UTF-8 and other charsets with their status', () => {
    expect(run(bytes('[[[[[1]]]]]'))).toMatchObject({ status: 400, type: 'entity.too.deep' });
    expect(run(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]))).toMatchObject({
      status: 400,
      type: 'entity.invalid.utf8',
    });
    // CESU-8 encoding of a lone surrogate is not UTF-8 either.
    expect(run(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toMatchObject({ status: 400 });
    expect(run(bytes('{}'), 'utf-16le')).toMatchObject({ status: 415, type: 'charset.unsupported' });
    expect(run(bytes('{}'), 'utf-16le')).toBeInstanceOf(JsonBodyError);
  });
});
