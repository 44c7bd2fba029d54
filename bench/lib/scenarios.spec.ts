import { describe, expect, it } from '@jest/globals';
import { HTTP_SCENARIOS, patchedName } from './scenarios.js';
import type { Fixture } from './seed.js';

describe('organization-patch', () => {
  const scenario = HTTP_SCENARIOS.find((s) => s.name === 'organization-patch');
  const fixture = { invitesOrganizationId: '00000000-0000-4000-8000-000000000001' } as Fixture;

  it('alternates two names, so consecutive requests each change the row', () => {
    const names = [0, 1, 2, 3].map(patchedName);
    expect(names).toEqual([names[0], names[1], names[0], names[1]]);
    expect(names[0]).not.toBe(names[1]);
    // Within the column's 64 characters (the service's limit).
    for (const name of names) expect(name.length).toBeLessThanOrEqual(64);
  });

  it("is a write of the invites' organization, run once by its owner, with only updated_at volatile", () => {
    expect(HTTP_SCENARIOS.filter((s) => s.name === 'organization-patch')).toHaveLength(1);
    expect(scenario).toMatchObject({ read: false, caller: 'member', volatile: ['updated_at'] });
    const spec = scenario!.request(fixture, 'service', 'run');
    expect(spec.method).toBe('PATCH');
    expect(spec.path).toBe('/api/organizations/00000000-0000-4000-8000-000000000001');
    expect([0, 1].map((n) => spec.body?.(n))).toEqual([{ name: patchedName(0) }, { name: patchedName(1) }]);
  });
});
