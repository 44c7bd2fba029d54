import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { readCaptureBatch, tokenOf } from './capture-events.js';

function error(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('readCaptureBatch', () => {
  it('finds the token in token, $token, api_key, then properties.token of the first event', () => {
    expect(readCaptureBatch([{ token: 'phc_a', $token: 'x' }]).token).toBe('phc_a');
    expect(readCaptureBatch([{ $token: 'phc_b' }]).token).toBe('phc_b');
    expect(readCaptureBatch([{ api_key: 'phc_c' }]).token).toBe('phc_c');
    expect(readCaptureBatch([{ properties: { token: 'phc_d' } }, { token: 'phc_d' }, {}]).token).toBe(
      'phc_d',
    );
    expect(readCaptureBatch({ properties: { token: 'phc_e' } }).token).toBe('phc_e');
    expect(readCaptureBatch([{ properties: {} }, { token: 'phc_second' }]).token).toBeNull();
    expect(readCaptureBatch([{ token: '  ' }]).token).toBeNull();
  });

  it('refuses events of two projects (401 naming the first other one), unless the batch has its own token', () => {
    const refused = error(() =>
      readCaptureBatch([
        { token: 'phc_a' },
        { properties: { token: 'phc_a' } },
        { properties: { token: 'phc_b' } },
      ]),
    );
    expect({ status: refused.getStatus(), body: refused.body }).toEqual({
      status: 401,
      body: {
        type: 'authentication_error',
        code: 'authentication_failed',
        detail:
          "The request holds events of more than one project: event 2's token differs from the request's. Send each project's events in a request of its own.",
        attr: '2__token',
      },
    });
    expect(error(() => readCaptureBatch({ batch: [{ token: 'phc_a' }, { $token: 'phc_b' }] })).attr).toBe(
      'batch__1__token',
    );
    // PostHog's capture gives the batch's own token precedence over the events'.
    expect(readCaptureBatch({ api_key: 'phc_a', batch: [{ token: 'phc_b' }] }).token).toBe('phc_a');
  });

  it('reads a {api_key, batch} body', () => {
    const batch = readCaptureBatch({ api_key: 'phc_batch', batch: [{ token: 'phc_event' }] });
    expect(batch.token).toBe('phc_batch');
    expect(batch.events[0].attrPrefix).toBe('batch__0__');
  });

  it('prefixes attrs with the index for arrays and nothing for a single event', () => {
    expect(readCaptureBatch([{}, {}]).events.map((e) => e.attrPrefix)).toEqual(['0__', '1__']);
    expect(readCaptureBatch({}).events.map((e) => e.attrPrefix)).toEqual(['']);
  });

  it.each([[42], ['text'], [null], [true]])('rejects the body %j', (body) => {
    expect(error(() => readCaptureBatch(body)).body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Expected a JSON array of events or one event object.',
      attr: null,
    });
  });

  it('rejects an empty array and a non-object event', () => {
    expect(error(() => readCaptureBatch([])).code).toBe('required');
    expect(error(() => readCaptureBatch([{}, 'x'])).attr).toBe('1');
  });
});

describe('tokenOf', () => {
  it('takes the batch token first, then the first event in the documented order', () => {
    expect(tokenOf({ token: 'phc_event' }, 'phc_batch')).toBe('phc_batch');
    expect(tokenOf({ properties: { token: 'phc_p' }, api_key: 'phc_k' })).toBe('phc_k');
    expect(tokenOf({ properties: { token: 'phc_p' } })).toBe('phc_p');
    expect(tokenOf({})).toBeNull();
    expect(tokenOf('not an event')).toBeNull();
  });
});
