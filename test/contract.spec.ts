import { describe, expect, it } from '@jest/globals';
import { checkResponse, loadContract, toJsonSchema } from './support/contract.js';

/**
 * The contract check itself (test/support/contract.ts), on responses built here: it must catch what typed
 * clients trip on. The e2e suite then runs every response of its test apps through it.
 *
 * @engine-independent: static checks of the repository, no database (run once, not again on a second engine).
 */
describe('contract check', () => {
  const contract = loadContract();
  const recording = {
    id: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
    distinct_id: 'user-1',
    viewed: false,
    viewers: [],
    recording_duration: 60,
    active_seconds: 29,
    inactive_seconds: 30,
    start_time: '2026-11-20T09:00:00.000Z',
    end_time: '2026-11-20T09:01:00.000Z',
    click_count: 3,
    keypress_count: 2,
    mouse_activity_count: 4,
    console_log_count: 1,
    console_warn_count: 1,
    console_error_count: 1,
    start_url: null,
    person: null,
    storage: 'postgres',
    snapshot_source: 'web',
    ongoing: false,
    activity_score: 52.24,
    retention_period_days: 30,
    expiry_time: '2026-12-20T00:00:00.000Z',
    recording_ttl: 29,
  };
  const check = (body: unknown, status = 200, path = '/api/projects/1/session_recordings/abc') =>
    checkResponse(contract, 'GET', path, status, 'application/json', Buffer.from(JSON.stringify(body)));

  it('accepts a recording as documented', () => {
    expect(check(recording)).toEqual([]);
  });

  it('refuses a float where an integer is documented', () => {
    const problems = check({ ...recording, recording_duration: 107.537 });
    expect(problems).toHaveLength(1);
    expect(problems?.[0]).toContain('/recording_duration must be integer');
  });

  it('refuses a key the schema does not have, and a missing one', () => {
    expect(check({ ...recording, surprise: 1 })?.[0]).toContain('must NOT have additional properties');
    const { viewers, ...missing } = recording;
    void viewers;
    expect(check(missing)?.[0]).toContain("must have required property 'viewers'");
  });

  it('refuses null where the schema does not allow it, a bad format and a value outside an enum', () => {
    expect(check({ ...recording, viewed: null })?.[0]).toContain('/viewed must be boolean');
    expect(check({ ...recording, start_time: 'yesterday' })?.[0]).toContain('/start_time must match format');
    expect(check({ ...recording, snapshot_source: 'tv' })?.[0]).toContain(
      '/snapshot_source must be equal to one',
    );
  });

  it('refuses an undocumented status and a non-JSON body where JSON is documented', () => {
    expect(check(recording, 418)).toEqual([
      'GET /api/projects/1/session_recordings/abc → 418 (/api/projects/{project_id}/session_recordings/{id}): status 418 is not documented',
    ]);
    const text = checkResponse(
      contract,
      'GET',
      '/api/projects/1/session_recordings/abc',
      200,
      'text/plain',
      Buffer.from('hi'),
    );
    expect(text?.[0]).toContain('documented as application/json, sent as text/plain');
    // Another media type the operation documents is accepted as it is (snapshots as JSON lines).
    const lines = checkResponse(
      contract,
      'GET',
      '/api/projects/1/session_recordings/abc/snapshots',
      200,
      'application/jsonl; charset=utf-8',
      Buffer.from('["w",{}]\n'),
    );
    expect(lines).toEqual([]);
  });

  it('checks error bodies against the error schema', () => {
    const error = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };
    expect(check(error, 404)).toEqual([]);
    expect(check({ ...error, stack: 'at x' }, 404)?.[0]).toContain('additional properties');
  });

  it('matches literal path segments before parameters, with or without a trailing slash', () => {
    const page = { results: [], next: null, previous: null, total_count: 0 };
    const at = (path: string) =>
      checkResponse(contract, 'GET', path, 200, 'application/json', Buffer.from(JSON.stringify(page)));
    expect(at('/api/organizations/x/pipeline_destinations/activity/')).toEqual([]);
    // The same body on the record path is not a plugin record.
    expect(at('/api/organizations/x/pipeline_destinations/7')?.length).toBeGreaterThan(0);
  });

  it('leaves requests outside the contract alone (unknown paths, other methods)', () => {
    expect(checkResponse(contract, 'GET', '/nowhere', 404, 'application/json', null)).toBeNull();
    expect(checkResponse(contract, 'DELETE', '/api/organizations', 405, 'application/json', null)).toBeNull();
  });

  it('turns nullable OpenAPI schemas into JSON Schema', () => {
    expect(toJsonSchema({ type: 'string', nullable: true, enum: ['a'] })).toEqual({
      type: ['string', 'null'],
      enum: ['a', null],
    });
    expect(toJsonSchema({ nullable: true, allOf: [{ $ref: '#/components/schemas/X' }] })).toEqual({
      anyOf: [{ type: 'null' }, { allOf: [{ $ref: 'openapi-components#/definitions/X' }] }],
    });
  });
});
