import type { RequestSpec } from './load.js';
import type { ScenarioName } from './options.js';
import type { Fixture } from './seed.js';

export type Side = 'service' | 'baseline';

export interface HttpScenario {
  name: ScenarioName;
  description: string;
  /** List and retrieve scenarios are held to the ratio targets; the write path is reported only. */
  read: boolean;
  /** The request; `run` makes the bodies of write scenarios unique per bench run and side. */
  request(fixture: Fixture, side: Side, run: string): RequestSpec;
  /** Fields that legitimately differ between two answers (ids and timestamps of rows each side creates). */
  volatile: readonly string[];
  /** Why the scenario cannot run on this database, or null. */
  unavailable?(fixture: Fixture): string | null;
}

const NO_RECORDINGS = (f: Fixture) =>
  f.recordings ? null : 'the schema has no session recordings (their module is not merged yet)';

export const HTTP_SCENARIOS: readonly HttpScenario[] = [
  {
    name: 'organizations-list',
    description: 'GET /api/organizations?limit=100 — the caller is a member of 200 organizations',
    read: true,
    request: () => ({ method: 'GET', path: '/api/organizations?limit=100' }),
    volatile: [],
  },
  {
    name: 'organization-retrieve',
    description: 'GET /api/organizations/:id',
    read: true,
    request: (f) => ({ method: 'GET', path: `/api/organizations/${f.retrieveOrganizationId}` }),
    volatile: [],
  },
  {
    name: 'recordings-list',
    description: 'GET /api/projects/:id/session_recordings?limit=100 — 1,000,000 recordings in the project',
    read: true,
    request: (f) => ({
      method: 'GET',
      path: `/api/projects/${f.recordings?.projectId}/session_recordings?limit=100`,
    }),
    volatile: [],
    unavailable: NO_RECORDINGS,
  },
  {
    name: 'recording-retrieve',
    description: 'GET /api/projects/:id/session_recordings/:id',
    read: true,
    request: (f) => ({
      method: 'GET',
      path: `/api/projects/${f.recordings?.projectId}/session_recordings/${f.recordings?.recordingId}`,
    }),
    volatile: [],
    unavailable: NO_RECORDINGS,
  },
  {
    name: 'batch-exports-list',
    description: 'GET /api/organizations/:id/batch_exports?limit=100 — 200 exports × 10 runs (latest_runs)',
    read: true,
    request: (f) => ({
      method: 'GET',
      path: `/api/organizations/${f.exportsOrganizationId}/batch_exports?limit=100`,
    }),
    volatile: [],
  },
  {
    name: 'invite-create',
    description: 'POST /api/organizations/:id/invites — a new address each request (a write transaction)',
    read: false,
    request: (f, side, run) => ({
      method: 'POST',
      path: `/api/organizations/${f.invitesOrganizationId}/invites`,
      body: (n) => ({ target_email: `invitee-${run}-${side}-${n}@bench.example`, first_name: 'Bench' }),
    }),
    volatile: ['id', 'created_at', 'updated_at'],
  },
];
