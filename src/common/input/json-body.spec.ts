import { describe, expect, it } from '@jest/globals';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JsonBodyError, jsonDepthExceeds, jsonShapeProblem, verifyJsonBody } from './json-body.js';

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

describe('jsonShapeProblem', () => {
  const values = (text: string): number => {
    // The smallest limit the text passes is its value count.
    let n = 0;
    while (jsonShapeProblem(bytes(text), 1000, n) === 'values') n++;
    return n;
  };

  it('counts values as the streaming parser does: keys excluded, empty containers one each', () => {
    expect(values('1')).toBe(1);
    expect(values('"a,b[{"')).toBe(1);
    expect(values('{}')).toBe(1);
    expect(values('[]')).toBe(1);
    expect(values('[1,2,3]')).toBe(4);
    expect(values('{"a":1,"b":[true,null,{}]}')).toBe(6);
    expect(values(' { "a" : [ ] , "b,c" : "x,y" } ')).toBe(3);
    expect(values('{"name":[{},{},{}]}')).toBe(5);
    expect(values('[[],[[]],{"k":{}}]')).toBe(6);
    expect(values('"\\\\",')).toBe(1);
  });

  it('says which limit a body passes first', () => {
    const wide = `{"name":[${Array(1000).fill('{}').join(',')}]}`;
    expect(jsonShapeProblem(bytes(wide), 64, 1002)).toBeNull();
    expect(jsonShapeProblem(bytes(wide), 64, 1001)).toBe('values');
    expect(jsonShapeProblem(bytes(wide), 3, 10)).toBe('values');
    expect(jsonShapeProblem(bytes(wide), 2, 10)).toBe('depth');
    expect(jsonShapeProblem(bytes('[[[1]]]'), 2, 10)).toBe('depth');
    expect(jsonShapeProblem(bytes('[[[1]]]'), 3, 3)).toBe('values');
  });
});

describe('verifyJsonBody with a value limit', () => {
  it('refuses more values than allowed with 413 before parsing', () => {
    const verify = verifyJsonBody(64, 5);
    const run = (text: string) => {
      try {
        verify({} as IncomingMessage, {} as ServerResponse, bytes(text), 'utf-8');
        return null;
      } catch (e) {
        return e as JsonBodyError;
      }
    };
    expect(run('[1,2,3,4]')).toBeNull();
    expect(run('[1,2,3,4,5]')).toMatchObject({
      status: 413,
      type: 'entity.too.many.values',
      message: 'Request body has too many JSON values: at most 5.',
    });
  });
});
