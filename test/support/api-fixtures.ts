/**
 * An organization with one of everything the API manages, created through the API by its owner, so that a
 * test can call any operation of the OpenAPI document with ids that exist: `pathValues` maps each path
 * parameter to a fixture id and `baseBody` gives a request body the operation accepts.
 */
import type { OpenAPIObject } from '@nestjs/swagger';
import type { Feature } from '../../src/common/feature/feature.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { type ApiOperation, pathParameters, sample, unique } from './api-operations.js';
import type { TestApp } from './create-test-app.js';
import type { TestUser } from './factories.js';
import { newSessionId, rr, snapshotEvent } from './recordings.js';

export const PLUGIN_COLLECTIONS = [
  'pipeline_destinations',
  'pipeline_frontend_apps',
  'pipeline_import_apps',
  'pipeline_transformations',
] as const;

export interface Tenant {
  organizationId: string;
  projectId: number;
  apiToken: string;
  batchExportId: string;
  runId: string;
  inviteId: string;
  memberUuid: string;
  plugins: Record<(typeof PLUGIN_COLLECTIONS)[number], number>;
  pluginConfigId: number;
  sessionId: string;
  accessToken: string;
  /** The ids the features' own test fixtures made, by the path segment before `{id}`. */
  featureIds: Record<string, string | number>;
  /** A recording playlist of the project, with `sessionId` pinned. */
  playlistShortId: string;
}

const HOUR = 3600_000;

/** Creates a tenant: an organization of `owner` holding one of every resource. */
export async function createTenant(t: TestApp, owner: TestUser): Promise<Tenant> {
  const ok = <T>(res: { status: number; body: unknown; req?: unknown }, what: string): T => {
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as T;
  };
  const org = ok<{ id: string; teams: { id: number; api_token: string }[] }>(
    await t.http
      .post('/api/organizations')
      .set(owner.auth)
      .send({ name: unique('Tenant ') }),
    'organization',
  );
  const base = `/api/organizations/${org.id}`;
  const project = org.teams[0];

  const exportBody = batchExportBody();
  const batchExport = ok<{ id: string }>(
    await t.http.post(`${base}/batch_exports`).set(owner.auth).send(exportBody),
    'batch export',
  );
  ok(
    await t.http
      .post(`${base}/batch_exports/${batchExport.id}/backfill`)
      .set(owner.auth)
      .send(backfillBody(t.clock.now())),
    'backfill',
  );
  const runs = ok<{ results: { id: string }[] }>(
    await t.http.get(`${base}/batch_exports/${batchExport.id}/runs`).set(owner.auth),
    'runs',
  );

  const invite = ok<{ id: string }>(
    await t.http
      .post(`${base}/invites`)
      .set(owner.auth)
      .send({ target_email: `${unique('invitee')}@example.com`, send_email: false }),
    'invite',
  );
  const member = await t.factories.user();
  await t.factories.member(org.id, member, MembershipLevel.MEMBER);

  const plugins = {} as Tenant['plugins'];
  for (const collection of PLUGIN_COLLECTIONS) {
    plugins[collection] = ok<{ id: number }>(
      await t.http.post(`${base}/${collection}`).set(owner.auth).send(pluginBody()),
      collection,
    ).id;
  }
  const pluginConfig = ok<{ id: number }>(
    await t.http
      .post(`/api/projects/${project.id}/plugin_configs`)
      .set(owner.auth)
      .send({ plugin: plugins.pipeline_transformations, enabled: true, config: { a: 'b' } }),
    'plugin config',
  );

  const sessionId = newSessionId('tenant');
  const now = t.clock.now().getTime();
  ok(
    await t.http.post('/s/').send([
      snapshotEvent({
        token: project.api_token,
        sessionId,
        distinctId: unique('visitor'),
        events: [rr.meta(now - 2000, 'https://example.com/'), rr.full(now - 1000)],
      }),
    ]),
    'capture',
  );
  const sharing = ok<{ access_token: string }>(
    await t.http
      .patch(`/api/projects/${project.id}/session_recordings/${sessionId}/sharing`)
      .set(owner.auth)
      .send({ enabled: true }),
    'sharing',
  );

  // Each feature's declared fixture (`testFixture` of its manifest) adds its objects.
  const featureIds: Record<string, string | number> = {};
  for (const feature of t.features) {
    if (!feature.testFixture) continue;
    Object.assign(
      featureIds,
      await feature.testFixture.create({
        organizationId: org.id,
        projectId: project.id,
        request: async <T>(method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown) =>
          ok<T>(
            await t.http[method](path)
              .set(owner.auth)
              .send(body as object),
            `${feature.name} fixture`,
          ),
      }),
    );
  }
  const playlist = ok<{ short_id: string }>(
    await t.http
      .post(`/api/projects/${project.id}/session_recording_playlists`)
      .set(owner.auth)
      .send({ name: unique('Playlist ') }),
    'playlist',
  );
  ok(
    await t.http
      .post(
        `/api/projects/${project.id}/session_recording_playlists/${playlist.short_id}/recordings/${sessionId}`,
      )
      .set(owner.auth),
    'pin',
  );

  return {
    featureIds,
    organizationId: org.id,
    projectId: project.id,
    apiToken: project.api_token,
    batchExportId: batchExport.id,
    runId: runs.results[0].id,
    inviteId: invite.id,
    memberUuid: member.uuid,
    plugins,
    pluginConfigId: pluginConfig.id,
    sessionId,
    accessToken: sharing.access_token,
    playlistShortId: playlist.short_id,
  };
}

/**
 * The value of each path parameter of the operation in the tenant, found by its name and the collection it
 * follows (`domains/{id}` is the domain). A parameter nothing here knows fails the test, so a new route gets a
 * fixture when it is added; a parameter with an example in the document (public SDK assets) takes it.
 */
export function pathValues(op: ApiOperation, tenant: Tenant): Record<string, string> {
  const values: Record<string, string> = {};
  for (const { name, collection } of pathParameters(op.path)) {
    const value = valueFor(name, collection, tenant, op);
    if (value === undefined)
      throw new Error(`no fixture for {${name}} in ${op.method.toUpperCase()} ${op.path}`);
    values[name] = encodeURIComponent(value);
  }
  return values;
}

function valueFor(name: string, collection: string, t: Tenant, op: ApiOperation): string | undefined {
  if (name === 'organization_id' || (name === 'id' && collection === 'organizations'))
    return t.organizationId;
  if (name === 'project_id' || (name === 'id' && collection === 'projects')) return String(t.projectId);
  if (name === 'run_id') return t.runId;
  if (name === 'user__uuid') return t.memberUuid;
  if (name === 'recording_id' || (name === 'id' && collection === 'session_recordings')) return t.sessionId;
  if (name === 'access_token') return t.accessToken;
  if (name === 'short_id') return t.playlistShortId;
  if (name === 'session_recording_id') return t.sessionId;
  if (name === 'token' && collection === 'array') return t.apiToken;
  if (name === 'id') {
    const ids: Record<string, string> = {
      batch_exports: t.batchExportId,
      invites: t.inviteId,
      plugin_configs: String(t.pluginConfigId),
    };
    if (collection in ids) return ids[collection];
    if (collection in t.featureIds) return String(t.featureIds[collection]);
    if (collection in t.plugins) return String(t.plugins[collection as keyof Tenant['plugins']]);
  }
  const parameter = op.parameters.find((p) => p.in === 'path' && p.name === name);
  const example = parameter?.example ?? parameter?.schema?.example;
  return example === undefined ? undefined : String(example);
}

/**
 * A body the operation accepts in the tenant: the schema's sample, with the semantic rules the schema cannot
 * express (a destination's config, a free domain, a plugin of this organization) filled in.
 */
export function baseBody(
  document: OpenAPIObject,
  op: ApiOperation,
  tenant: Tenant,
  now: Date,
  features: readonly Feature[] = [],
): unknown {
  const id = op.operationId;
  const declared = features.find((f) => f.testFixture?.bodies?.[id])?.testFixture?.bodies?.[id];
  if (declared) return declared();
  if (id === 'BatchExportsController_create') return batchExportBody();
  if (id === 'BatchExportsController_backfill') return backfillBody(now);
  if (id === 'InvitesController_create') return inviteBody();
  if (id === 'InvitesController_bulk') return [inviteBody(), inviteBody()];
  if (/^Pipeline\w+Controller_create$/.test(id)) return pluginBody();
  if (/^Pipeline\w+Controller_updateSource$/.test(id)) return { 'index.ts': 'export const x = 1' };
  if (id === 'PluginConfigsController_create')
    return { plugin: tenant.plugins.pipeline_transformations, config: { a: 'b' } };
  if (id === 'SessionRecordingsController_update') return { person: { properties: { plan: 'pro' } } };
  if (id === 'EventsCaptureController_captureEvents') {
    return {
      api_key: tenant.apiToken,
      batch: [
        {
          event: '$pageview',
          distinct_id: unique('visitor'),
          properties: { $current_url: 'https://example.com/' },
        },
      ],
    };
  }
  if (id === 'CaptureController_captureSnapshots') {
    const at = now.getTime();
    return [
      snapshotEvent({
        token: tenant.apiToken,
        sessionId: newSessionId('fuzz'),
        distinctId: unique('visitor'),
        events: [rr.meta(at - 2000, 'https://example.com/'), rr.full(at - 1000)],
      }),
    ];
  }
  if (id === 'SdkController_flags' || id === 'SdkController_decide')
    return { token: tenant.apiToken, distinct_id: unique('visitor') };
  return op.body ? sample(document, op.body) : undefined;
}

function batchExportBody() {
  return {
    name: unique('Export '),
    interval: 'hour',
    destination: {
      type: 'S3',
      config: {
        bucket_name: 'bucket',
        region: 'eu-west-1',
        prefix: 'events/',
        aws_access_key_id: 'AKIAEXAMPLE',
        aws_secret_access_key: 'secret',
      },
    },
  };
}

function backfillBody(now: Date) {
  const hour = Math.floor(now.getTime() / HOUR) * HOUR;
  return {
    start_at: new Date(hour - 3 * HOUR).toISOString(),
    end_at: new Date(hour - 2 * HOUR).toISOString(),
  };
}

const inviteBody = () => ({ target_email: `${unique('invitee')}@example.com`, send_email: false });

const pluginBody = () => ({ name: unique('Plugin '), plugin_type: 'source' });
