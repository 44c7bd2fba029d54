import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isTransactionConflict, isUniqueViolation } from '../common/errors/database-errors.js';
import { describeActivity, recordActivityNow } from '../common/activity/activity-context.js';
import { Mailer } from '../common/mail/mailer.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/config.js';
import { TransactionHost } from '../database/transactions.js';
import type { MemberDto } from '../members/dto/member.dto.js';
import { MembersService } from '../members/members.service.js';
import { MembershipsRepository } from '../memberships/memberships.repository.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import { MEMBERSHIP_UNIQUE_CONSTRAINT } from '../memberships/organization-membership.entity.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import { RolesService } from '../roles/roles.service.js';
import { UsersService } from '../users/users.service.js';
import { itemAttr } from './bulk-invites.js';
import type { CreateInviteDto } from './dto/invite-input.dto.js';
import { type InviteDto, toInviteDto } from './dto/invite.dto.js';
import { invitationEmail } from './invitation-email.js';
import { INVITE_EMAIL_UNIQUE_INDEX, type InviteEntity } from './invite.entity.js';
import { combineInvites, expiresAt, type InviteGrant, isExpired } from './invite-rules.js';
import { InvitesRepository } from './invites.repository.js';

/**
 * How often the creation transaction is run at most. The address locks already serialise writers of one address;
 * the retries cover what they cannot (a deadlock or unique violation caused by another writer of the table).
 */
const CREATE_ATTEMPTS = 5;

export const INVITE_ERRORS = {
  LEVEL_ABOVE_OWN: 'You cannot invite someone at a level above your own.',
  ALREADY_MEMBER: 'A user with this email address already belongs to the organization.',
  DUPLICATE_EMAIL: 'This address is already invited earlier in this request.',
  EXPIRED: 'This invite has expired; ask for a new one.',
  ACCEPTER_ALREADY_MEMBER: 'You are already a member of this organization.',
  MEMBERS_CANNOT_INVITE:
    'Only admins and owners can invite people to this organization (members_can_invite is off).',
} as const;

/**
 * Invites of an organization (docs/decisions.md §6). Any member lists and creates invites (at a level not above its
 * own); admins and the invite's creator delete them; the invitee accepts with its own key. Creation validates
 * every invite first, writes them in one transaction (replacing earlier invites to the same addresses), and
 * only after the commit sends the invitation e-mails, whose failures are logged and never fail the request.
 */
@Injectable()
export class InvitesService {
  private readonly logger = new Logger(InvitesService.name);
  private readonly validityDays: number;
  private readonly publicUrl: string;

  constructor(
    private readonly transactions: TransactionHost,
    private readonly invites: InvitesRepository,
    private readonly access: MembershipsService,
    private readonly memberships: MembershipsRepository,
    private readonly members: MembersService,
    private readonly projects: ProjectsService,
    private readonly organizations: OrganizationsService,
    private readonly roles: RolesService,
    private readonly users: UsersService,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.validityDays = config.get('INVITE_DAYS_VALIDITY');
    this.publicUrl = config.get('PUBLIC_URL');
  }

  async list(principal: Principal, organizationId: string, page: PageParams): Promise<Page<InviteDto>> {
    const access = await this.access.requireAccess(principal, organizationId);
    const { items, total } = await this.invites.pageForOrganization(access.organizationId, page);
    const now = this.clock.now();
    return { items: items.map((i) => this.toDto(i, now)), total };
  }

  async create(principal: Principal, organizationId: string, input: CreateInviteDto): Promise<InviteDto> {
    const [invite] = await this.createAll(principal, organizationId, [input], false);
    return invite;
  }

  /** All or nothing: every item is checked before any is written, and all are written in one transaction. */
  bulkCreate(principal: Principal, organizationId: string, inputs: CreateInviteDto[]): Promise<InviteDto[]> {
    return this.createAll(principal, organizationId, inputs, true);
  }

  /** Admins and owners delete any invite of the organization; other members only those they created. */
  async delete(principal: Principal, organizationId: string, id: string): Promise<void> {
    const access = await this.access.requireAccess(principal, organizationId);
    const invite = await this.invites.findInOrganization(access.organizationId, id);
    if (!invite) throw ApiError.notFound();
    if (access.level < MembershipLevel.ADMIN && invite.createdById !== principal.userId) {
      throw ApiError.insufficientLevel();
    }
    if (!(await this.invites.delete(access.organizationId, invite.id))) throw ApiError.notFound();
  }

  /**
   * The invitee (a key whose user's e-mail equals the invite's address, any case) joins the organization at
   * the invite's level, with its project access recorded, in the organization's default role when it has one
   * (in the same transaction); every invite to that address in the organization is deleted. Someone else's or
   * an unknown invite: 404; expired: 400; already a member: 400.
   */
  async accept(principal: Principal, inviteId: string): Promise<MemberDto> {
    const user = await this.users.findById(principal.userId);
    if (!user) throw ApiError.authenticationFailed();
    const organizationId = await this.runAcceptance(principal, inviteId, user.id, user.email);
    return this.members.describe(organizationId, user.id);
  }

  private async runAcceptance(
    principal: Principal,
    inviteId: string,
    userId: number,
    email: string,
  ): Promise<string> {
    try {
      return await this.transactions.withTransaction(async () => {
        const invite = await this.invites.findForUpdate(inviteId);
        if (!invite || invite.targetEmail.toLowerCase() !== email.toLowerCase()) throw ApiError.notFound();
        await this.access.requireKeyReaches(principal, invite.organizationId);
        if (isExpired(invite.createdAt, this.clock.now(), this.validityDays)) {
          throw ApiError.validation(INVITE_ERRORS.EXPIRED, null, 'expired');
        }
        if ((await this.memberships.levelOf(userId, invite.organizationId)) !== null) {
          throw ApiError.validation(INVITE_ERRORS.ACCEPTER_ALREADY_MEMBER, null, 'already_member');
        }
        const membership = await this.memberships.add({
          organizationId: invite.organizationId,
          userId,
          level: invite.level as MembershipLevel,
        });
        await this.memberships.grantProjectAccess(
          membership.id,
          invite.organizationId,
          invite.privateProjectAccess,
          invite.createdById,
        );
        await this.roles.joinDefaultRole(invite.organizationId, userId, membership.id);
        await this.invites.deleteForEmail(invite.organizationId, invite.targetEmail);
        return invite.organizationId;
      });
    } catch (err) {
      // Two acceptances racing for the same user and organization: the loser is "already a member".
      if (isUniqueViolation(err, MEMBERSHIP_UNIQUE_CONSTRAINT)) {
        throw ApiError.validation(INVITE_ERRORS.ACCEPTER_ALREADY_MEMBER, null, 'already_member');
      }
      throw err;
    }
  }

  private async createAll(
    principal: Principal,
    organizationId: string,
    inputs: CreateInviteDto[],
    bulk: boolean,
  ): Promise<InviteDto[]> {
    const access = await this.access.requireAccess(principal, organizationId);
    if (access.level < MembershipLevel.ADMIN) {
      const policies = await this.organizations.policies(access.organizationId);
      if (!policies) throw ApiError.notFound();
      if (!policies.membersCanInvite) throw ApiError.permissionDenied(INVITE_ERRORS.MEMBERS_CANNOT_INVITE);
    }
    const attr = (index: number, field: string) => (bulk ? itemAttr(index, field) : field);
    await this.check(access, inputs, attr);

    const now = this.clock.now();
    const created = await this.write(access.organizationId, principal.userId, inputs, now);
    await this.sendInvitations(principal, access.organizationId, created);
    return created.map((invite) => this.toDto(invite, this.clock.now()));
  }

  /** Every rule of docs/decisions.md §6 that needs the database, for every item, before anything is written. */
  private async check(
    access: { organizationId: string; level: number },
    inputs: CreateInviteDto[],
    attr: (index: number, field: string) => string,
  ): Promise<void> {
    inputs.forEach((input, i) => {
      if ((input.level ?? MembershipLevel.MEMBER) > access.level) {
        throw new ApiError(403, 'permission_denied', INVITE_ERRORS.LEVEL_ABOVE_OWN, attr(i, 'level'));
      }
    });

    const seen = new Set<string>();
    inputs.forEach((input, i) => {
      const key = input.target_email.toLowerCase();
      if (seen.has(key)) throw ApiError.validation(INVITE_ERRORS.DUPLICATE_EMAIL, attr(i, 'target_email'));
      seen.add(key);
    });

    const projectIds = inputs.flatMap((input) => (input.private_project_access ?? []).map((g) => g.id));
    const known = await this.projects.idsInOrganization(access.organizationId, [...new Set(projectIds)]);
    inputs.forEach((input, i) => {
      const listed = new Set<number>();
      (input.private_project_access ?? []).forEach((grant, j) => {
        const field = attr(i, `private_project_access__${j}__id`);
        if (!known.has(grant.id)) {
          throw ApiError.validation(`Project ${grant.id} does not exist in this organization.`, field);
        }
        if (listed.has(grant.id)) throw ApiError.validation(`Project ${grant.id} is listed twice.`, field);
        listed.add(grant.id);
      });
    });

    const members = await this.memberships.memberEmails(
      access.organizationId,
      inputs.map((input) => input.target_email),
    );
    inputs.forEach((input, i) => {
      if (members.has(input.target_email.toLowerCase())) {
        throw ApiError.validation(INVITE_ERRORS.ALREADY_MEMBER, attr(i, 'target_email'), 'already_member');
      }
    });
  }

  /**
   * One transaction: the addresses are locked (in one global order, see `InvitesRepository#lockAddresses`), then
   * each address's earlier invites are deleted and the new invite inserted (with `combine_pending_invites`,
   * merged with the pending ones first: PostHog's rule). Concurrent requests naming the same addresses, single or
   * bulk and in any order, therefore run one after the other and the last writer wins, as with sequential
   * requests. Should a deadlock or a unique violation still end the transaction, it is rolled back whole and run
   * again.
   */
  private async write(
    organizationId: string,
    createdById: number,
    inputs: CreateInviteDto[],
    now: Date,
  ): Promise<InviteEntity[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transactions.withTransaction(async () => {
          const ids: string[] = [];
          await this.invites.lockAddresses(
            organizationId,
            inputs.map((input) => input.target_email),
          );
          for (const input of inputs) {
            let grant: InviteGrant = {
              level: input.level ?? MembershipLevel.MEMBER,
              privateProjectAccess: (input.private_project_access ?? []).map((g) => ({
                id: g.id,
                level: g.level,
              })),
            };
            if (input.combine_pending_invites) {
              const pendingSince = new Date(now.getTime() - this.validityDays * 24 * 60 * 60 * 1000);
              const pending = await this.invites.findPendingForEmail(
                organizationId,
                input.target_email,
                pendingSince,
              );
              grant = combineInvites(grant, pending);
            }
            await this.invites.deleteForEmail(organizationId, input.target_email);
            ids.push(
              await this.invites.insert({
                organizationId,
                targetEmail: input.target_email,
                firstName: input.first_name ?? '',
                level: grant.level,
                message: input.message ?? null,
                privateProjectAccess: grant.privateProjectAccess,
                sendEmail: input.send_email ?? true,
                createdById,
                createdAt: now,
                updatedAt: now,
              }),
            );
          }
          // The activity log entry commits with the invites (the e-mails follow the commit).
          describeActivity({ itemId: ids.join(',').slice(0, 200) });
          await recordActivityNow();
          // Read back in the same transaction: a concurrent request replacing these invites right after the
          // commit must not take them out of this answer.
          return this.invites.findWithCreators(ids);
        });
      } catch (err) {
        const lostRace = isUniqueViolation(err, INVITE_EMAIL_UNIQUE_INDEX) || isTransactionConflict(err);
        if (!lostRace || attempt >= CREATE_ATTEMPTS) throw err;
        this.logger.warn(
          { organizationId, attempt, code: (err as { code?: string }).code },
          'invite creation lost a race; retried',
        );
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.floor(Math.random() * 10)));
      }
    }
  }

  /**
   * After the commit: sends the invitation e-mail of every invite with `send_email` when SMTP is configured, and
   * records `emailing_attempt_made` for each attempt, whether the SMTP server accepted the message or not (the
   * attempt was made; a failure is logged). Nothing here fails the request or touches the invites otherwise.
   */
  private async sendInvitations(
    principal: Principal,
    organizationId: string,
    invites: InviteEntity[],
  ): Promise<void> {
    const toSend = invites.filter((invite) => invite.sendEmail);
    if (!this.mailer.enabled || !toSend.length) return;
    let organizationName: string;
    try {
      organizationName = (await this.organizations.retrieve(principal, organizationId)).name;
    } catch (err) {
      this.logger.error(
        { organizationId, err },
        'invitation e-mails not sent: the organization could not be read',
      );
      return;
    }
    await Promise.all(
      toSend.map(async (invite) => {
        const context = { inviteId: invite.id, organizationId };
        try {
          await this.mailer.send(
            invitationEmail({
              inviteId: invite.id,
              targetEmail: invite.targetEmail,
              firstName: invite.firstName,
              level: invite.level,
              message: invite.message,
              organizationName,
              inviter: invite.createdBy ?? null,
              expiresAt: expiresAt(invite.createdAt, this.validityDays),
              publicUrl: this.publicUrl,
            }),
          );
          this.logger.log(context, 'invitation e-mail sent');
        } catch (err) {
          this.logger.warn(
            { ...context, error: err instanceof Error ? err.message : String(err) },
            'invitation e-mail could not be sent; the invite is kept',
          );
        }
      }),
    );
    const at = this.clock.now();
    try {
      await this.invites.markEmailingAttempted(
        toSend.map((invite) => invite.id),
        at,
      );
      for (const invite of toSend) {
        invite.emailingAttemptMade = true;
        invite.updatedAt = at;
      }
    } catch (err) {
      this.logger.error({ organizationId, err }, 'could not record the invitation e-mail attempts');
    }
  }

  private toDto(invite: InviteEntity, now: Date): InviteDto {
    return toInviteDto(invite, isExpired(invite.createdAt, now, this.validityDays));
  }
}
