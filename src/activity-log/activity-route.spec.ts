import { describe, expect, it } from '@jest/globals';
import { maskSecrets, MASKED } from '../common/activity/activity-context.js';
import { CHANGES_MAX_BYTES, fallbackChanges, routeActivity } from './activity-route.js';

const ORG = '0190f0a0-1111-7000-8000-000000000001';

describe('routeActivity', () => {
  it('reads the scope, the item and the activity of a write from its route', () => {
    expect(routeActivity('PATCH', '/api/projects/:id', { id: '7' })).toEqual({
      scope: 'Project',
      itemId: '7',
      activity: 'updated',
      teamId: 7,
      organizationId: null,
      domainId: null,
    });
    expect(
      routeActivity('POST', '/api/organizations/:organization_id/roles', { organization_id: ORG }),
    ).toMatchObject({
      scope: 'Role',
      itemId: null,
      activity: 'created',
      organizationId: ORG,
    });
    expect(
      routeActivity('POST', '/api/organizations/:organization_id/batch_exports/:id/runs/:run_id/cancel', {
        organization_id: ORG,
        id: 'e1',
        run_id: 'r1',
      }),
    ).toMatchObject({ scope: 'BatchExport', itemId: 'e1', activity: 'runs_cancel' });
    expect(
      routeActivity('DELETE', '/api/organizations/:organization_id/roles/:role_id/role_memberships/:id', {
        organization_id: ORG,
        role_id: 'r',
        id: 'm',
      }),
    ).toMatchObject({ scope: 'Role', itemId: 'r', activity: 'role_memberships_deleted' });
    expect(
      routeActivity('PATCH', '/api/projects/:project_id/session_recordings/:recording_id/sharing', {
        project_id: '3',
        recording_id: 's1',
      }),
    ).toMatchObject({ scope: 'Replay', itemId: 's1', activity: 'sharing_updated', teamId: 3 });
  });

  it('gives access rule changes the scope AccessControl, on the object they govern', () => {
    expect(routeActivity('PUT', '/api/projects/:id/resource_access_controls', { id: '4' })).toMatchObject({
      scope: 'AccessControl',
      itemId: '4',
      activity: 'updated',
      teamId: 4,
    });
  });

  it('takes the organization of a SCIM write from its domain, and only ids of the right form', () => {
    expect(
      routeActivity('PATCH', '/scim/v2/:domain_id/Users/:id', { domain_id: ORG, id: 'u1' }),
    ).toMatchObject({
      scope: 'User',
      itemId: 'u1',
      domainId: ORG,
    });
    expect(
      routeActivity('POST', '/scim/v2/:domain_id/Users', { domain_id: 'not-a-uuid' }).domainId,
    ).toBeNull();
    expect(routeActivity('PATCH', '/api/organizations/:id', { id: 'nope' }).organizationId).toBeNull();
    expect(routeActivity('PATCH', '/api/projects/:id', { id: '1e9' }).teamId).toBeNull();
  });
});

describe('maskSecrets', () => {
  it('masks secret fields at any depth and key values whatever their field, and bounds sizes', () => {
    expect(
      maskSecrets({
        name: 'x',
        destination: { config: { password: 'p', aws_secret_access_key: 's', host: 'h', token: '' } },
        note: 'phx_abcdefghijklmnop',
        list: Array.from({ length: 150 }, (_, i) => i),
        long: 'a'.repeat(1500),
      }),
    ).toEqual({
      name: 'x',
      destination: { config: { password: MASKED, aws_secret_access_key: MASKED, host: 'h', token: '' } },
      note: MASKED,
      list: Array.from({ length: 100 }, (_, i) => i),
      long: `${'a'.repeat(1000)}…`,
    });
  });
});

describe('fallbackChanges', () => {
  it('keeps a small body whole and masks its secrets', () => {
    const [change] = fallbackChanges('POST', 'Role', true, { name: 'Support', api_key: 'phx_secret' })!;
    expect(change.after).toEqual({ name: 'Support', api_key: MASKED });
  });

  it('bounds a body past CHANGES_MAX_BYTES: large values become markers, at most 100 fields', () => {
    // Each string is within maskSecrets' 1,000 characters; together they pass the bound.
    const nested = { a: 'x'.repeat(900), b: 'y'.repeat(900) };
    const body: Record<string, unknown> = { name: 'Big', nested };
    for (let i = 0; i < 150; i++) body[`f${i}`] = 'z'.repeat(200);
    const [change] = fallbackChanges('POST', 'Role', true, body)!;
    const after = change.after as Record<string, unknown>;
    expect(after.name).toBe('Big');
    expect(after.nested).toEqual({ truncated: true, bytes: Buffer.byteLength(JSON.stringify(nested)) });
    expect(after.f0).toBe('z'.repeat(200));
    expect(Object.keys(after)).toHaveLength(100);
    expect(Buffer.byteLength(JSON.stringify(after))).toBeLessThan(2 * CHANGES_MAX_BYTES);
  });
});
