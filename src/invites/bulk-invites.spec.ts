import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { itemAttr, parseBulkInvites } from './bulk-invites.js';

async function errorOf(body: unknown): Promise<ApiError> {
  try {
    await parseBulkInvites(body);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('parseBulkInvites did not throw');
}

describe('parseBulkInvites', () => {
  it('returns the validated, normalised items in order', async () => {
    const items = await parseBulkInvites([
      { target_email: ' A@Example.COM ' },
      { target_email: 'b@example.com', level: 8, private_project_access: [{ id: 3, level: 'admin' }] },
    ]);
    expect(items.map((i) => i.target_email)).toEqual(['A@example.com', 'b@example.com']);
    expect(items[1].level).toBe(8);
    expect(items[1].private_project_access).toEqual([{ id: 3, level: 'admin' }]);
  });

  it.each([{}, { target_email: 'a@example.com' }, 'text', 42, null, undefined])(
    'refuses a body that is not an array: %j',
    async (body) => {
      const error = await errorOf(body);
      expect(error.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Expected a JSON array of 1 to 20 invites in the request body.',
        attr: null,
      });
    },
  );

  it.each([0, 21])('refuses %i items', async (n) => {
    const body = Array.from({ length: n }, (_, i) => ({ target_email: `u${i}@example.com` }));
    const error = await errorOf(body);
    expect(error.body).toMatchObject({ code: 'invalid_input', attr: null });
    expect(error.detail).toBe(`A bulk request holds 1 to 20 invites; this one has ${n}.`);
  });

  it('accepts exactly 20 items', async () => {
    const body = Array.from({ length: 20 }, (_, i) => ({ target_email: `u${i}@example.com` }));
    expect(await parseBulkInvites(body)).toHaveLength(20);
  });

  it.each([
    [[{ target_email: 'ok@example.com' }, 'nope'], '1', 'invalid_input'],
    [[{ target_email: 'ok@example.com' }, [{}]], '1', 'invalid_input'],
    [[{ target_email: 'ok@example.com' }, null], '1', 'invalid_input'],
    [[{}], '0__target_email', 'required'],
    [
      [{ target_email: 'a@x.com' }, { target_email: 'a@x.com' }, { target_email: 'bad' }],
      '2__target_email',
      'invalid_input',
    ],
    [[{ target_email: 'a@x.com', first_name: 'x'.repeat(31) }], '0__first_name', 'max_length'],
    [[{ target_email: 'a@x.com', message: 'x'.repeat(1001) }], '0__message', 'max_length'],
    [[{ target_email: 'a@x.com', level: 3 }], '0__level', 'invalid_input'],
    [[{ target_email: 'a@x.com', colour: 'red' }], '0__colour', 'unknown_field'],
    [
      [
        { target_email: 'a@x.com' },
        { target_email: 'b@x.com', private_project_access: [{ id: 1, level: 'owner' }] },
      ],
      '1__private_project_access__0__level',
      'invalid_input',
    ],
    [
      [{ target_email: 'a@x.com', private_project_access: [{ id: 1, level: 'member', x: 1 }] }],
      '0__private_project_access__0__x',
      'unknown_field',
    ],
  ])('names the item and field of the first error: %j → %s', async (body, attr, code) => {
    const error = await errorOf(body);
    expect(error.body).toMatchObject({ type: 'validation_error', code, attr });
  });

  it('drops the read-only fields of the items', async () => {
    const [item] = await parseBulkInvites([{ target_email: 'a@x.com', id: 'x', is_expired: true }]);
    expect(item).toEqual({ target_email: 'a@x.com' });
  });

  it('builds item attrs', () => {
    expect(itemAttr(3, 'target_email')).toBe('3__target_email');
    expect(itemAttr(0, null)).toBe('0');
  });
});
