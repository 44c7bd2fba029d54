import { describe, expect, it } from '@jest/globals';
import { isJsonContentType } from './require-json.middleware.js';

describe('isJsonContentType', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'Application/JSON',
    '  application/json  ; charset=utf-8',
    'application/merge-patch+json',
    'application/vnd.api+json',
    'application/problem+json; charset=utf-8',
  ])('accepts %j', (type) => {
    expect(isJsonContentType(type)).toBe(true);
  });

  it.each([
    undefined,
    '',
    'text/plain',
    'text/json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonp',
    'application/json-seq',
    'application/xml',
    'application/+json',
    'json',
    'application/ld+json+xml',
    'image/svg+json',
  ])('rejects %j', (type) => {
    expect(isJsonContentType(type)).toBe(false);
  });
});
