import { CliUsageError, required, splitList } from '../common/cli/cli-args.js';
import type { CliCommand, CliContext, CliGroup } from '../common/feature/feature.js';
import { isUuid } from '../common/validation/ids.js';
import type { ServiceAccountDto } from './dto/service-account.dto.js';
import type { ServiceAccountsService } from './service-accounts.service.js';

export const SERVICE_ACCOUNTS_GROUP: CliGroup = {
  name: 'service-accounts',
  title: 'Organization service accounts (keys that belong to the organization, not to a person)',
};

const LEVELS: Record<string, 1 | 8> = { member: 1, '1': 1, admin: 8, '8': 8 };

function organizationId(values: CliContext['values'], command: string): string {
  const org = required(values, 'org', command);
  if (!isUuid(org)) throw new CliUsageError(`${command}: --org must be an organization id (a uuid)`);
  return org.toLowerCase();
}

function level(values: CliContext['values'], command: string): 1 | 8 {
  const raw = values.level;
  if (raw === undefined) return 1;
  const found = typeof raw === 'string' ? LEVELS[raw.trim().toLowerCase()] : undefined;
  if (!found) throw new CliUsageError(`${command}: --level must be member (1) or admin (8)`);
  return found;
}

function projectIds(values: CliContext['values'], command: string): number[] {
  return (splitList(values.projects) ?? []).map((p) => {
    if (!/^\d{1,10}$/.test(p) || Number(p) < 1 || Number(p) > 2147483647) {
      throw new CliUsageError(`${command}: --projects: '${p}' is not a project id`);
    }
    return Number(p);
  });
}

async function withServiceAccounts<T>(
  context: CliContext,
  fn: (serviceAccounts: ServiceAccountsService) => Promise<T>,
): Promise<T> {
  const [{ ServiceAccountsModule }, { ServiceAccountsService }] = await Promise.all([
    import('./service-accounts.module.js'),
    import('./service-accounts.service.js'),
  ]);
  return context.withModules([ServiceAccountsModule], (app) => fn(app.get(ServiceAccountsService)));
}

/** One line of `service-accounts list` per service account, then one per key. */
function describe(account: ServiceAccountDto): string[] {
  const lines = [
    [
      account.id,
      `name=${account.name}`,
      `level=${account.level}`,
      `user=${account.user.uuid}`,
      `created_by=${account.created_by?.email ?? 'operator'}`,
      `created=${account.created_at}`,
    ].join('  '),
  ];
  for (const k of account.keys) {
    lines.push(
      [
        '  key',
        k.id,
        k.mask_value,
        `scopes=${k.scopes.join(',')}`,
        k.label ? `label=${k.label}` : null,
        k.scoped_teams.length ? `projects=${k.scoped_teams.join(',')}` : null,
        `last_used=${k.last_used_at ?? 'never'}`,
      ]
        .filter(Boolean)
        .join('  '),
    );
  }
  return lines;
}

export const SERVICE_ACCOUNTS_COMMANDS: CliCommand[] = [
  {
    name: 'service-accounts create',
    activity: { scope: 'ServiceAccount' },
    summary: 'Create a service account of an organization, with its first key',
    synopsis: '--org ID --name N --scopes S [--level member|admin] [--projects id,...] [--label L]',
    options: {
      org: { type: 'string', help: "the organization's id (uuid)" },
      name: { type: 'string', help: 'its name (at most 150 characters)' },
      scopes: { type: 'string', help: "'*' or a comma list, e.g. organization:read,batch_export:write" },
      level: { type: 'string', help: 'its membership level: member (the default) or admin' },
      projects: { type: 'string', help: 'restrict its key to these projects of the organization (ids)' },
      label: { type: 'string', help: 'a name for the key (at most 40 characters)' },
    },
    description:
      'Prints the service account and its key, then the secret once, as the last line of standard output. The\n' +
      'key is restricted to the organization; it keeps working whoever leaves it.',
    validate(values, command) {
      organizationId(values, command);
      required(values, 'name', command);
      required(values, 'scopes', command);
      level(values, command);
      projectIds(values, command);
    },
    async run(context) {
      const { values, command, out } = context;
      const org = organizationId(values, command);
      const created = await withServiceAccounts(context, (serviceAccounts) =>
        serviceAccounts
          .createAsOperator({
            organizationId: org,
            name: required(values, 'name', command),
            level: level(values, command),
            scopes: splitList(values.scopes) ?? [],
            projects: projectIds(values, command),
            label: typeof values.label === 'string' ? values.label.trim() : '',
          })
          .catch((error: unknown) => {
            throw new CliUsageError(`${command}: ${(error as Error).message}`);
          }),
      );
      if (!created) throw new CliUsageError(`${command}: no organization with id ${org}`);
      out(
        `created service account ${created.id} "${created.name}" (level ${created.level}) in organization ${org}`,
      );
      out(
        `key ${created.key.id} (${created.key.mask_value}) with scopes ${created.key.scopes.join(',')}` +
          (created.key.scoped_teams.length ? `, projects ${created.key.scoped_teams.join(',')}` : ''),
      );
      out('the secret is shown only once:');
      out(created.key.value);
      return 0;
    },
  },
  {
    name: 'service-accounts list',
    summary: "List an organization's service accounts and their keys (masked)",
    synopsis: '--org ID',
    options: { org: { type: 'string', help: "the organization's id (uuid)" } },
    description: 'One line per active service account, then one per active key.',
    validate: (values, command) => void organizationId(values, command),
    async run(context) {
      const { values, command, out } = context;
      const accounts = await withServiceAccounts(context, (s) =>
        s.listAsOperator(organizationId(values, command)),
      );
      if (!accounts.length) out('no service accounts');
      for (const account of accounts) for (const line of describe(account)) out(line);
      return 0;
    },
  },
  {
    name: 'service-accounts revoke',
    activity: { scope: 'ServiceAccount' },
    summary: 'Revoke a service account: its keys and its membership',
    synopsis: '--id ID',
    options: { id: { type: 'string', help: "the service account's id" } },
    description: 'Requests with its keys get 401 at once; it leaves its organization.',
    validate: (values, command) => void required(values, 'id', command),
    async run(context) {
      const id = required(context.values, 'id', context.command);
      if (!(await withServiceAccounts(context, (s) => s.revokeAsOperator(id)))) {
        throw new CliUsageError(`${context.command}: no active service account with id ${id}`);
      }
      context.out(`revoked service account ${id}`);
      return 0;
    },
  },
];
