import type { INestApplication } from '@nestjs/common';
import type TestAgent from 'supertest/lib/agent.js';
import { MembershipsRepository } from '../../src/memberships/memberships.repository.js';
import { OrganizationsService } from '../../src/organizations/organizations.service.js';
import type { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { PersonalApiKeysService } from '../../src/personal-api-keys/personal-api-keys.service.js';

let sequence = 0;

export interface TestUser {
  id: number;
  uuid: string;
  email: string;
  /** The key's secret: send as `Authorization: Bearer <secret>`. */
  key: string;
  keyId: string;
  auth: { Authorization: string };
}

/** Builds test data through the real services and the real API: keys are minted, not faked. */
export class Factories {
  constructor(
    private readonly app: INestApplication,
    private readonly http: TestAgent,
  ) {}

  /** A user with a real personal API key (default: every scope). */
  async user(
    options: {
      email?: string;
      scopes?: string;
      organizations?: string[];
      projects?: number[];
      label?: string;
    } = {},
  ): Promise<TestUser> {
    const email = options.email ?? `user${++sequence}-${process.pid}@example.com`;
    const { key, secret } = await this.app.get(PersonalApiKeysService).create({
      email,
      scopes: options.scopes ?? '*',
      label: options.label,
      organizations: options.organizations,
      projects: options.projects,
    });
    const user = (await this.http.get('/api/users/@me').set('Authorization', `Bearer ${secret}`).expect(200))
      .body as { id: number; uuid: string };
    return {
      id: user.id,
      uuid: user.uuid,
      email,
      key: secret,
      keyId: key.id,
      auth: { Authorization: `Bearer ${secret}` },
    };
  }

  /** Another key for an existing user. */
  async keyFor(
    user: TestUser,
    scopes: string,
    restrictions: { organizations?: string[]; projects?: number[] } = {},
  ) {
    const { secret } = await this.app
      .get(PersonalApiKeysService)
      .create({ email: user.email, scopes, ...restrictions });
    return { Authorization: `Bearer ${secret}` };
  }

  /** An organization created through the API by `owner` (who becomes its owner). */
  async organization(
    owner: TestUser,
    name = `Org ${++sequence}`,
  ): Promise<{ id: string; name: string; teams: { id: number; api_token: string }[] }> {
    const res = await this.http.post('/api/organizations').set(owner.auth).send({ name }).expect(201);
    return res.body as { id: string; name: string; teams: { id: number; api_token: string }[] };
  }

  /** Sets the organization's `plugins_access_level` as the operator's CLI does (9 may publish global plugins). */
  async pluginsAccessLevel(organizationId: string, level: number): Promise<void> {
    const change = await this.app.get(OrganizationsService).setPluginsAccessLevel(organizationId, level);
    if (!change) throw new Error(`no organization ${organizationId}`);
  }

  /** Adds `user` to the organization at `level`. */
  async member(organizationId: string, user: TestUser, level: MembershipLevel): Promise<void> {
    await this.app.get(MembershipsRepository).add({ organizationId, userId: user.id, level });
  }
}
