import type { PresentedSecret } from './presented-secret.js';

/**
 * Who is calling: the user behind a personal API key and that key's restrictions. The guard attaches it to
 * the request; handlers receive it with `@CurrentPrincipal()`. Services decide which objects it may touch.
 */
export class Principal {
  constructor(
    readonly userId: number,
    readonly userUuid: string,
    readonly keyId: string,
    readonly scopes: readonly string[],
    /** Organization uuids the key is limited to; null: no restriction. */
    readonly scopedOrganizations: readonly string[] | null,
    /** Project ids the key is limited to; null: no restriction. */
    readonly scopedTeams: readonly number[] | null,
  ) {}

  /** The organization ids a list must be limited to, or null when the key is not restricted. */
  get onlyOrganizations(): readonly string[] | null {
    return this.scopedOrganizations?.length ? this.scopedOrganizations : null;
  }

  /** The project ids a list must be limited to, or null when the key is not restricted. */
  get onlyProjects(): readonly number[] | null {
    return this.scopedTeams?.length ? this.scopedTeams : null;
  }

  /** Whether the key is restricted to some organizations or projects. */
  get isRestricted(): boolean {
    return this.onlyOrganizations !== null || this.onlyProjects !== null;
  }

  /**
   * Whether the key's organization restriction allows the organization (membership, and for a key restricted
   * to projects whether the organization holds one of them, are checked by `MembershipsService`).
   */
  allowsOrganization(organizationId: string): boolean {
    return !this.onlyOrganizations || this.onlyOrganizations.includes(organizationId);
  }

  /** Whether the key's restrictions allow the project of the given organization. */
  allowsProject(projectId: number, organizationId: string): boolean {
    if (!this.allowsOrganization(organizationId)) return false;
    return !this.onlyProjects || this.onlyProjects.includes(projectId);
  }
}

/**
 * Resolves a bearer secret to a principal; provided by the personal API keys module. It finds the key by
 * `secret.digest`, the digest the failure throttle then remembers a valid key by (computed once per request).
 */
export interface ApiKeyVerifier {
  /** The principal of an active key with this secret, or null for an unknown or revoked key. */
  verify(secret: PresentedSecret): Promise<Principal | null>;
}

export const API_KEY_VERIFIER = Symbol('API_KEY_VERIFIER');

/**
 * A project secret credential the guard authenticated on an `@AcceptsProjectSecret` route: a project secret API
 * key (`phs_…`, a row of its own, with scopes) or the project's own secret API token (current or backup).
 */
export interface ProjectCredential {
  projectId: number;
  organizationId: string;
  /**
   * What the per-key rate limit counts by: `project_secret_api_key:<id>` for a key, `project_secret_token:<project
   * id>` for the project's token (its current and backup values share one counter).
   */
  trackerId: string;
  /** What it may do: a key's scopes; the project's token holds `feature_flag:read`, what it was made for. */
  scopes: readonly string[];
}

/**
 * Resolves a `phs_…` secret to its project; provided by the project secret API keys module. A key is found by
 * `secret.digest`, as for `ApiKeyVerifier`.
 */
export interface ProjectSecretVerifier {
  /** The credential of an existing project secret API key or project secret token, or null. */
  verify(secret: PresentedSecret): Promise<ProjectCredential | null>;
}

export const PROJECT_SECRET_VERIFIER = Symbol('PROJECT_SECRET_VERIFIER');
