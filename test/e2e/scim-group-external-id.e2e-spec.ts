import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import {
  expectScimError,
  json,
  SCIM_GROUP,
  SCIM_PATCH,
  scimClient,
  scimTenant,
  type ScimTenant,
} from '../support/scim.js';

/**
 * SCIM Groups keep the identity provider's `externalId` (Entra and Okta send it): stored on create, replaced by
 * PUT and PATCH (both dialects), filtered with `externalId eq`, and another organization's groups never match.
 */
describe('SCIM group externalId', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let a: ScimTenant;
  let b: ScimTenant;

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({ DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '500' });
    a = await scimTenant(t, dns);
    b = await scimTenant(t, dns);
  }, 60000);

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  it('stores it on create, echoes it, and finds the group by it', async () => {
    const scim = scimClient(t.http, a);
    const made = await scim('post', '/Groups', {
      schemas: [SCIM_GROUP],
      displayName: 'Engineering',
      externalId: 'entra-group-7f1c',
    });
    expect(made.status).toBe(201);
    const group = json(made) as { id: string; externalId: string; displayName: string };
    expect(group).toMatchObject({ externalId: 'entra-group-7f1c', displayName: 'Engineering' });
    expect(json(await scim('get', `/Groups/${group.id}`))).toMatchObject({ externalId: 'entra-group-7f1c' });

    const found = json(
      await scim('get', `/Groups?filter=${encodeURIComponent('externalId eq "entra-group-7f1c"')}`),
    ) as { totalResults: number; Resources: { id: string }[] };
    expect(found.totalResults).toBe(1);
    expect(found.Resources.map((r) => r.id)).toEqual([group.id]);
    // Exact: another case is another id.
    const other = json(
      await scim('get', `/Groups?filter=${encodeURIComponent('externalId eq "ENTRA-GROUP-7F1C"')}`),
    ) as { totalResults: number };
    expect(other.totalResults).toBe(0);
    const both = json(
      await scim(
        'get',
        `/Groups?filter=${encodeURIComponent('externalId eq "entra-group-7f1c" and displayName eq "engineering"')}&excludedAttributes=members`,
      ),
    ) as { totalResults: number; Resources: Record<string, unknown>[] };
    expect(both.totalResults).toBe(1);
    expect(both.Resources[0].members).toBeUndefined();

    // Another organization's token never sees it.
    const theirs = json(
      await scimClient(t.http, b)(
        'get',
        `/Groups?filter=${encodeURIComponent('externalId eq "entra-group-7f1c"')}`,
      ),
    ) as { totalResults: number };
    expect(theirs.totalResults).toBe(0);
    const stored = (await t.dataSource.query(`SELECT scim_external_id FROM roles WHERE id = $1`, [
      group.id,
    ])) as {
      scim_external_id: string;
    }[];
    expect(stored).toEqual([{ scim_external_id: 'entra-group-7f1c' }]);
  });

  it('is replaced by PUT and PATCH (with and without a path), removed by PATCH remove', async () => {
    const scim = scimClient(t.http, a);
    const { id } = json(await scim('post', '/Groups', { schemas: [SCIM_GROUP], displayName: 'Sales' })) as {
      id: string;
    };
    expect(json(await scim('get', `/Groups/${id}`))).not.toHaveProperty('externalId');
    const put = await scim('put', `/Groups/${id}`, {
      schemas: [SCIM_GROUP],
      displayName: 'Sales',
      externalId: 'okta-00g1',
    });
    expect(json(put)).toMatchObject({ externalId: 'okta-00g1' });
    await scim('patch', `/Groups/${id}`, {
      schemas: [SCIM_PATCH],
      Operations: [{ op: 'replace', path: 'externalId', value: 'okta-00g2' }],
    });
    expect(json(await scim('get', `/Groups/${id}`))).toMatchObject({ externalId: 'okta-00g2' });
    await scim('patch', `/Groups/${id}`, {
      schemas: [SCIM_PATCH],
      Operations: [{ op: 'Replace', value: { externalId: 'entra-3' } }],
    });
    expect(json(await scim('get', `/Groups/${id}`))).toMatchObject({ externalId: 'entra-3' });
    await scim('patch', `/Groups/${id}`, {
      schemas: [SCIM_PATCH],
      Operations: [{ op: 'remove', path: 'externalId' }],
    });
    expect(json(await scim('get', `/Groups/${id}`))).not.toHaveProperty('externalId');
  });

  it('refuses an externalId that is not a string of at most 255 characters (400 SCIM body)', async () => {
    const scim = scimClient(t.http, a);
    expectScimError(
      await scim('post', '/Groups', { schemas: [SCIM_GROUP], displayName: 'Bad', externalId: 42 }),
      400,
      'invalidValue',
    );
    expectScimError(
      await scim('post', '/Groups', {
        schemas: [SCIM_GROUP],
        displayName: 'Bad',
        externalId: 'x'.repeat(256),
      }),
      400,
      'invalidValue',
    );
  });
});
