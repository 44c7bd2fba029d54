import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { generateToken, randomUrlSafe, sha256Hex } from '../common/crypto/tokens.js';
import { ApiError } from '../common/errors/api-error.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { throwIfViolated } from '../common/validation/violation.js';
import { TransactionHost } from '../database/transactions.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import {
  CHALLENGE_LENGTH,
  challengeRecordName,
  DEFAULT_SETTINGS,
  type DomainSettings,
  settingsViolation,
} from './domain-rules.js';
import { DOMAIN_UNIQUE_CONSTRAINT, type DomainEntity } from './domain.entity.js';
import { DomainsRepository } from './domains.repository.js';
import type { CreateDomainDto, ReplaceDomainDto, UpdateDomainDto } from './dto/domain-input.dto.js';
import { type DomainDto, toDomainDto } from './dto/domain.dto.js';
import { TxtResolver } from './txt-resolver.js';

/** The settings of `current` with the fields present in `input` applied. */
function applySettings(current: DomainSettings, input: UpdateDomainDto): DomainSettings {
  return {
    jitProvisioningEnabled: input.jit_provisioning_enabled ?? current.jitProvisioningEnabled,
    ssoEnforcement: input.sso_enforcement ?? current.ssoEnforcement,
    samlEntityId: input.saml_entity_id ?? current.samlEntityId,
    samlAcsUrl: input.saml_acs_url ?? current.samlAcsUrl,
    samlX509Cert: input.saml_x509_cert ?? current.samlX509Cert,
  };
}

/** Prefix of SCIM bearer tokens (`phscim_…`), so a leaked one is recognisable. */
export const SCIM_TOKEN_PREFIX = 'phscim_';

/** The 400 for SCIM on a domain that is not verified. */
function scimNeedsVerification(): ApiError {
  return ApiError.validation(
    'Verify the domain before enabling SCIM provisioning.',
    'scim_enabled',
    'verification_required',
  );
}

/** What the SCIM management endpoints answer: the token only when one was just made. */
export interface ScimConfig {
  scim_enabled: boolean;
  scim_bearer_token?: string;
}

/** A domain as the SCIM feature authenticates it: by its token's digest. */
export interface ScimDomain {
  id: string;
  organizationId: string;
  domain: string;
  /** The stored digest, for a constant-time comparison with the presented token's. */
  tokenDigest: string;
}

/**
 * Domains of an organization (docs/decisions.md §7): any member reads them; admins and owners create, change, delete
 * and verify them. Verification looks up the challenge in DNS through TxtResolver.
 */
@Injectable()
export class DomainsService {
  private readonly logger = new Logger(DomainsService.name);

  constructor(
    private readonly transactions: TransactionHost,
    private readonly domains: DomainsRepository,
    private readonly memberships: MembershipsService,
    private readonly txt: TxtResolver,
    private readonly clock: Clock,
  ) {}

  async list(principal: Principal, organizationId: string, page: PageParams): Promise<Page<DomainDto>> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const { items, total } = await this.domains.pageForOrganization(access.organizationId, page);
    return { items: items.map(toDomainDto), total };
  }

  async retrieve(principal: Principal, organizationId: string, id: string): Promise<DomainDto> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    return toDomainDto(await this.find(access.organizationId, id));
  }

  async create(principal: Principal, organizationId: string, input: CreateDomainDto): Promise<DomainDto> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    // A new domain is unverified: SCIM cannot be on yet.
    if (input.scim_enabled === true) throw scimNeedsVerification();
    const settings = applySettings(DEFAULT_SETTINGS, input);
    throwIfViolated(settingsViolation(DEFAULT_SETTINGS, settings, false));
    try {
      const entity = await this.domains.insert({
        ...settings,
        organizationId: access.organizationId,
        domain: input.domain,
        verificationChallenge: randomUrlSafe(CHALLENGE_LENGTH),
      });
      return toDomainDto(entity);
    } catch (err) {
      if (isUniqueViolation(err, DOMAIN_UNIQUE_CONSTRAINT)) {
        throw ApiError.validation('This domain is already registered.', 'domain', 'unique');
      }
      throw err;
    }
  }

  /**
   * PATCH, and PUT (whose body has `domain`): applies the settings sent under a row lock, so the rules hold
   * against concurrent updates; settings left out keep their value. `domain`, when sent, must be the current
   * one (it is immutable).
   */
  async update(
    principal: Principal,
    organizationId: string,
    id: string,
    input: UpdateDomainDto | ReplaceDomainDto,
  ): Promise<DomainDto> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    return this.transactions.withTransaction(async () => {
      const current = await this.domains.lockInOrganization(access.organizationId, id);
      if (!current) throw ApiError.notFound();
      if (input.domain !== undefined && input.domain.trim() !== current.domain) {
        throw ApiError.validation("Field 'domain' is read-only.", 'domain', 'read_only_field');
      }
      const next = applySettings(current, input);
      throwIfViolated(settingsViolation(current, next, current.verifiedAt !== null));
      const scim = input.scim_enabled;
      if (scim === true && !current.scimEnabled && current.verifiedAt === null) throw scimNeedsVerification();
      const changed = (Object.keys(next) as (keyof DomainSettings)[]).filter((k) => next[k] !== current[k]);
      if (changed.length) await this.domains.update(id, Object.fromEntries(changed.map((k) => [k, next[k]])));
      // Turning SCIM on makes a token, shown in this answer only; turning it off forgets it.
      let token: string | undefined;
      if (scim === true && !current.scimEnabled) token = await this.rollScimToken(id);
      if (scim === false && current.scimEnabled) await this.domains.setScimToken(id, null);
      if (!changed.length && token === undefined && scim !== false) return toDomainDto(current);
      const updated = await this.domains.findInOrganization(access.organizationId, id);
      return { ...toDomainDto(updated!), scim_bearer_token: token ?? null };
    });
  }

  async delete(principal: Principal, organizationId: string, id: string): Promise<void> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    if (!(await this.domains.delete(access.organizationId, id))) throw ApiError.notFound();
  }

  /**
   * Looks up the TXT records of `_posthog-challenge.<domain>`; a record equal to the challenge verifies the
   * domain (verified_at = now). No match, no record, or a DNS failure leaves it unverified: still 200, and
   * the outcome is logged (a failure as a warning).
   */
  async verify(principal: Principal, organizationId: string, id: string): Promise<DomainDto> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    const domain = await this.find(access.organizationId, id);
    if (domain.verifiedAt) {
      throw ApiError.validation('This domain has already been verified.', null, 'already_verified');
    }
    const name = challengeRecordName(domain.domain);
    const result = await this.txt.lookup(name);
    const context = { domainId: domain.id, organizationId: access.organizationId, record: name };
    if (result.outcome === 'failed') {
      this.logger.warn(
        { ...context, code: result.code, error: result.message },
        'domain verification: DNS lookup failed; the domain stays unverified',
      );
      return toDomainDto(domain);
    }
    if (result.outcome === 'absent' || !result.records.includes(domain.verificationChallenge)) {
      this.logger.log(
        { ...context, code: result.outcome === 'absent' ? result.code : 'NO_MATCH' },
        'domain verification: no TXT record matches the challenge; the domain stays unverified',
      );
      return toDomainDto(domain);
    }
    await this.domains.markVerified(domain.id, this.clock.now());
    this.logger.log(context, 'domain verified');
    return toDomainDto(await this.find(access.organizationId, id));
  }

  /** `GET …/domains/:id/scim/`: whether SCIM is on (never the token). Admins and owners. */
  async scimConfig(principal: Principal, organizationId: string, id: string): Promise<ScimConfig> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    const domain = await this.find(access.organizationId, id);
    return { scim_enabled: domain.scimEnabled };
  }

  /**
   * Turns SCIM on (or, when on, rolls its token): a verified domain only (else 400 `verification_required`);
   * `regenerate` requires it to be on already (400 `scim_disabled`). The new token is returned once.
   */
  async enableScim(
    principal: Principal,
    organizationId: string,
    id: string,
    regenerate = false,
  ): Promise<Required<ScimConfig>> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    return this.transactions.withTransaction(async () => {
      const domain = await this.domains.lockInOrganization(access.organizationId, id);
      if (!domain) throw ApiError.notFound();
      if (regenerate && !domain.scimEnabled) {
        throw ApiError.validation('SCIM is not enabled on this domain.', null, 'scim_disabled');
      }
      if (domain.verifiedAt === null) throw scimNeedsVerification();
      return { scim_enabled: true, scim_bearer_token: await this.rollScimToken(domain.id) };
    });
  }

  /** Turns SCIM off: its token stops working at once. Admins and owners. */
  async disableScim(principal: Principal, organizationId: string, id: string): Promise<ScimConfig> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    const domain = await this.find(access.organizationId, id);
    await this.domains.setScimToken(domain.id, null);
    return { scim_enabled: false };
  }

  /**
   * The SCIM-enabled, verified domain whose token has this SHA-256 digest, or null (the SCIM guard's one indexed
   * lookup).
   */
  async findScimDomain(tokenDigest: string): Promise<ScimDomain | null> {
    return this.domains.findByScimTokenDigest(tokenDigest);
  }

  /** Whether the domain belongs to the organization (for routes under it in other features). */
  async requireInOrganization(organizationId: string, id: string): Promise<void> {
    await this.find(organizationId, id);
  }

  /** A new token for the domain (SCIM on): only its digest is stored. */
  private async rollScimToken(id: string): Promise<string> {
    const token = generateToken(SCIM_TOKEN_PREFIX);
    await this.domains.setScimToken(id, sha256Hex(token));
    return token;
  }

  private async find(organizationId: string, id: string): Promise<DomainEntity> {
    const domain = await this.domains.findInOrganization(organizationId, id);
    if (!domain) throw ApiError.notFound();
    return domain;
  }
}
