import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PostHogAgentToolkit } from '@posthog/agent-toolkit';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

/**
 * PostHog's own npm client, `@posthog/agent-toolkit`, against the service on a loopback port: its API client
 * validates every answer with its own schemas (zod) and fails on any mismatch, so these calls pass only when
 * the service answers as PostHog does.
 */

/** What the toolkit's API client answers: the validated data, or the error it raised. */
type Result<T> = { success: true; data: T } | { success: false; error: Error };

interface ToolkitApi {
  organizations(): {
    list(): Promise<Result<{ id: string; name: string }[]>>;
    get(args: { orgId: string }): Promise<Result<{ id: string; name: string }>>;
    projects(args: { orgId: string }): {
      list(): Promise<Result<{ id: number; name: string; organization: string }[]>>;
    };
  };
  projects(): { get(args: { projectId: number }): Promise<Result<{ id: number; name: string }>> };
  apiKeys(): {
    current(): Promise<Result<{ scopes: string[]; scoped_teams: number[]; scoped_organizations: string[] }>>;
  };
  users(): {
    me(): Promise<
      Result<{
        distinct_id: string;
        organizations: { id: string }[];
        team: { id: number; organization: string };
        organization: { id: string };
      }>
    >;
  };
}

interface ToolkitContext {
  api: ToolkitApi;
  stateManager: {
    setDefaultOrganizationAndProject(): Promise<{ organizationId?: string; projectId: number }>;
  };
}

/** The data of a successful call, or the toolkit's own error (its message names the failed validation). */
function data<T>(result: Result<T>): T {
  if (!result.success) throw result.error;
  return result.data;
}

describe('@posthog/agent-toolkit against the service', () => {
  let t: TestApp;
  let baseUrl: string;
  let owner: TestUser;
  let older: { id: string; name: string; teams: { id: number }[] };
  let newer: { id: string; name: string; teams: { id: number }[] };

  const context = (key: string): ToolkitContext =>
    new PostHogAgentToolkit({
      posthogApiToken: key,
      posthogApiBaseUrl: baseUrl,
    }).getContext() as unknown as ToolkitContext;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await t.factories.user();
    older = (await t.factories.organization(owner, 'Toolkit Older')) as typeof older;
    newer = (await t.factories.organization(owner, 'Toolkit Newer')) as typeof newer;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists and reads organizations', async () => {
    const { api } = context(owner.key);
    const organizations = data(await api.organizations().list());
    expect(organizations.map((o) => o.id)).toEqual([older.id, newer.id]);
    expect(data(await api.organizations().get({ orgId: newer.id }))).toMatchObject({
      id: newer.id,
      name: 'Toolkit Newer',
    });
  });

  it("lists an organization's projects and reads one", async () => {
    const { api } = context(owner.key);
    const projects = data(await api.organizations().projects({ orgId: older.id }).list());
    expect(projects).toEqual([
      expect.objectContaining({ id: older.teams[0].id, name: 'Default project', organization: older.id }),
    ]);
    expect(data(await api.projects().get({ projectId: newer.teams[0].id }))).toMatchObject({
      id: newer.teams[0].id,
      name: 'Default project',
    });
  });

  it('reads the current key of an unrestricted key: scoped lists empty', async () => {
    const { api } = context(owner.key);
    expect(data(await api.apiKeys().current())).toMatchObject({
      scopes: ['*'],
      scoped_teams: [],
      scoped_organizations: [],
    });
  });

  it('reads the current key of restricted keys: the lists it is restricted to', async () => {
    const toOrganization = await t.factories.keyFor(owner, 'organization:read,project:read', {
      organizations: [older.id],
    });
    const toProject = await t.factories.keyFor(owner, 'project:read', { projects: [newer.teams[0].id] });
    const secret = (auth: { Authorization: string }) => auth.Authorization.replace('Bearer ', '');

    const orgKey = context(secret(toOrganization));
    expect(data(await orgKey.api.apiKeys().current())).toEqual(
      expect.objectContaining({ scoped_organizations: [older.id], scoped_teams: [] }),
    );
    // The toolkit picks its default project from the key: the allowed organization's.
    expect(await orgKey.stateManager.setDefaultOrganizationAndProject()).toEqual({
      organizationId: older.id,
      projectId: older.teams[0].id,
    });

    const projectKey = context(secret(toProject));
    expect(data(await projectKey.api.apiKeys().current())).toEqual(
      expect.objectContaining({ scoped_organizations: [], scoped_teams: [newer.teams[0].id] }),
    );
    expect(await projectKey.stateManager.setDefaultOrganizationAndProject()).toEqual({
      projectId: newer.teams[0].id,
    });
  });

  it('reads the calling user, with its current organization and project', async () => {
    const { api, stateManager } = context(owner.key);
    const me = data(await api.users().me());
    expect(me.organization.id).toBe(newer.id);
    expect(me.team).toMatchObject({ id: newer.teams[0].id, organization: newer.id });
    expect(me.organizations.map((o) => o.id).sort()).toEqual([older.id, newer.id].sort());
    expect(me.distinct_id.length).toBeGreaterThan(0);
    expect(await stateManager.setDefaultOrganizationAndProject()).toEqual({
      organizationId: newer.id,
      projectId: newer.teams[0].id,
    });
  });
});
