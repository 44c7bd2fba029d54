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

  /** Whether the key's restrictions allow the organization (membership is checked separately). */
  allowsOrganization(organizationId: string): boolean {
    return !this.scopedOrganizations?.length || this.scopedOrganizations.includes(organizationId);
  }

  /** Whether the key's restrictions allow the project of the given organization. */
  allowsProject(projectId: number, organizationId: string): boolean {
    if (!this.allowsOrganization(organizationId)) return false;
    return !this.scopedTeams?.length || this.scopedTeams.includes(projectId);
  }
}

/** Resolves a bearer secret to a principal; provided by the personal API keys module. */
export interface ApiKeyVerifier {
  /** The principal of an active key with this secret, or null for an unknown or revoked key. */
  verify(secret: string): Promise<Principal | null>;
}

export const API_KEY_VERIFIER = Symbol('API_KEY_VERIFIER');
