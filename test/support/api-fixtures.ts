/**
 * An organization with one of everything the API manages, created through the API by its owner, so that a
 * test can call any operation of the OpenAPI document with ids that exist: `pathValues` maps each path
 * parameter to a fixture id and `baseBody` gives a request body the operation accepts. What a feature's objects
 * are, and the bodies its operations take, come from its manifest's `testFixture`, in the order of the features
 * served: a new feature brings its own.
 */
import type { OpenAPIObject } from '@nestjs/swagger';
import type { Feature, FeatureFixtureTenant } from '../../src/common/feature/feature.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { type ApiOperation, pathParameters, sample, unique } from './api-operations.js';
import type { TestApp } from './create-test-app.js';
import type { TestUser } from './factories.js';

export interface Tenant {
  organizationId: string;
  projectId: number;
  apiToken: string;
  /**
   * The values of path parameters the features' fixtures made: by the path segment before `{id}`
   * (`batch_exports`, `pipeline_destinations`, `session_recordings`, …) or by the parameter's name (`run_id`,
   * `access_token`, `short_id`, …).
   */
  ids: Record<string, string | number>;
}

/** Creates a tenant: an organization of `owner` holding one of every resource of the features `t` serves. */
export async function createTenant(t: TestApp, owner: TestUser): Promise<Tenant> {
  const ok = <T>(res: { status: number; body: unknown }, what: string): T => {
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
  const project = org.teams[0];
  const ids: Record<string, string | number> = {};
  for (const feature of t.features) {
    const create = feature.testFixture?.create;
    if (!create) continue;
    const made = await create({
      organizationId: org.id,
      projectId: project.id,
      apiToken: project.api_token,
      now: t.clock.now(),
      ids,
      request: async <T>(
        method: 'get' | 'post' | 'patch' | 'delete',
        path: string,
        body?: unknown,
        options: { public?: boolean } = {},
      ) => {
        const req = t.http[method](path);
        if (!options.public) req.set(owner.auth);
        return ok<T>(await (body === undefined ? req : req.send(body as object)), `${feature.name} fixture`);
      },
      addMember: async () => {
        const member = await t.factories.user();
        await t.factories.member(org.id, member, MembershipLevel.MEMBER);
        return member.uuid;
      },
    });
    for (const [key, value] of Object.entries(made)) {
      if (key in ids)
        throw new Error(`the ${feature.name} fixture makes {${key}}, which another already made`);
      ids[key] = value;
    }
  }
  return { organizationId: org.id, projectId: project.id, apiToken: project.api_token, ids };
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
  if (
    name === 'project_id' ||
    (name === 'id' && (collection === 'projects' || collection === 'environments'))
  )
    return String(t.projectId);
  const key = name === 'id' ? collection : name;
  if (key in t.ids) return String(t.ids[key]);
  const parameter = op.parameters.find((p) => p.in === 'path' && p.name === name);
  const example = parameter?.example ?? parameter?.schema?.example;
  return example === undefined ? undefined : String(example);
}

/**
 * A body the operation accepts in the tenant: the one the operation's feature declares (`testFixture.bodies`,
 * for the rules the schema cannot express: a destination's config, a free domain, a plugin of this
 * organization), else the schema's sample.
 */
export function baseBody(
  document: OpenAPIObject,
  op: ApiOperation,
  tenant: Tenant,
  now: Date,
  features: readonly Feature[],
): unknown {
  // An alias twin (`/api/environments/…`) takes the bodies of the operation it stands for.
  const operationId = op.aliasOf ?? op.operationId;
  const declared = features.find((f) => f.testFixture?.bodies?.[operationId])?.testFixture?.bodies;
  if (declared) {
    const context: FeatureFixtureTenant = { ...tenant, now };
    return declared[operationId](context);
  }
  return op.body ? sample(document, op.body) : undefined;
}
