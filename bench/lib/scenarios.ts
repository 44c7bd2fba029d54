import type { RequestSpec } from './load.js';
import type { ScenarioName } from './options.js';
import type { Fixture } from './seed.js';

export type Side = 'service' | 'baseline';

export interface HttpScenario {
  name: ScenarioName;
  /** The name its results carry: `name`, or `name` + ACCESS_SUFFIX for the variant under access controls. */
  label: string;
  description: string;
  /**
   * Whose key sends the requests: `owner` (owner of the caller's organizations, whom no access rule limits: as
   * every read ran before access controls) or `member` (a plain member in the organizations read, subject to a
   * role, project, resource and export rules and, in the recordings' project, a recording access rule).
   */
  caller: 'owner' | 'member';
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

/** The label suffix of a read scenario's variant under access controls. */
export const ACCESS_SUFFIX = '+access';

/** The API key of the scenario's caller. */
export function scenarioKey(scenario: HttpScenario, fixture: Fixture): string {
  return scenario.caller === 'owner' ? (fixture.ownerApiKey ?? fixture.apiKey) : fixture.apiKey;
}

/** The name request `n` of `organization-patch` sets: two values in turn, so each request changes the row. */
export function patchedName(n: number): string {
  return n % 2 === 0 ? 'Bench organization 1 (patched)' : 'Bench organization 1';
}

type BaseScenario = Omit<HttpScenario, 'label' | 'caller'>;

const BASE_SCENARIOS: readonly BaseScenario[] = [
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
    name: 'events-list',
    description:
      "GET /api/projects/:id/events?limit=100 — the recordings' project, 50,000 events of 20 sessions (bench/lib/events-list.ts)",
    read: true,
    request: (f) => ({ method: 'GET', path: `/api/projects/${f.recordings?.projectId}/events?limit=100` }),
    volatile: [],
    unavailable: NO_RECORDINGS,
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
  {
    name: 'organization-patch',
    description:
      "PATCH /api/organizations/:id — the invites' organization renamed, alternating two names (a write transaction)",
    read: false,
    request: (f) => ({
      method: 'PATCH',
      path: `/api/organizations/${f.invitesOrganizationId}`,
      body: (n) => ({ name: patchedName(n) }),
    }),
    volatile: ['updated_at'],
  },
];

/**
 * Every HTTP scenario: each read scenario twice, by the owner (no access controls) and by the member (under
 * access controls, `<name>+access`), one after the other so their ratios come from the same run; the write
 * scenarios by the caller (owner of the invites' organization).
 */
export const HTTP_SCENARIOS: readonly HttpScenario[] = BASE_SCENARIOS.flatMap((s): HttpScenario[] =>
  s.read
    ? [
        { ...s, label: s.name, caller: 'owner' },
        {
          ...s,
          label: `${s.name}${ACCESS_SUFFIX}`,
          caller: 'member',
          description: `${s.description} — as a member under access controls`,
        },
      ]
    : [{ ...s, label: s.name, caller: 'member' }],
);
