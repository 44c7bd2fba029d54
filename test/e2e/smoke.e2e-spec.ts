import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });
  it('boots', async () => {
    const u = await t.factories.user();
    const res = await t.http.get('/api/organizations').set(u.auth).expect(200);
    expect(res.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });
});
