import { CliUsageError, required, splitList } from '../common/cli/cli-args.js';
import type { CliCommand, CliContext, CliGroup } from '../common/feature/feature.js';
import type { PersonalApiKeysService } from './personal-api-keys.service.js';

export const KEYS_GROUP: CliGroup = { name: 'keys', title: 'Personal API keys' };

/** `--projects`: a comma list of project ids. */
function projectIds(values: CliContext['values'], command: string): number[] | undefined {
  return splitList(values.projects)?.map((p) => {
    if (!/^\d+$/.test(p)) throw new CliUsageError(`${command}: --projects: '${p}' is not a project id`);
    return Number(p);
  });
}

async function withKeys<T>(
  context: CliContext,
  fn: (keys: PersonalApiKeysService) => Promise<T>,
): Promise<T> {
  const [{ PersonalApiKeysModule }, { PersonalApiKeysService }] = await Promise.all([
    import('./personal-api-keys.module.js'),
    import('./personal-api-keys.service.js'),
  ]);
  return context.withModules([PersonalApiKeysModule], (app) => fn(app.get(PersonalApiKeysService)));
}

export const KEYS_COMMANDS: CliCommand[] = [
  {
    name: 'keys create',
    activity: { scope: 'PersonalAPIKey' },
    summary: 'Create a personal API key (creates the user if missing)',
    synopsis: '--email E --scopes S [--label L] [--organizations uuid,...] [--projects id,...]',
    options: {
      email: { type: 'string', help: "the key owner's e-mail; the user is created if missing" },
      scopes: { type: 'string', help: "'*' or a comma list, e.g. organization:read,batch_export:write" },
      label: { type: 'string', help: 'a name for the key (at most 40 characters)' },
      organizations: { type: 'string', help: 'restrict the key to these organization ids' },
      projects: { type: 'string', help: 'restrict the key to these project ids' },
    },
    description: 'Prints the new secret once, as the last line of standard output.',
    validate(values, command) {
      projectIds(values, command);
      required(values, 'email', command);
      required(values, 'scopes', command);
    },
    async run(context) {
      const { values, command, out } = context;
      const email = required(values, 'email', command);
      const result = await withKeys(context, (keys) =>
        keys.create({
          email,
          scopes: required(values, 'scopes', command),
          label: values.label as string | undefined,
          organizations: splitList(values.organizations),
          projects: projectIds(values, command),
        }),
      );
      out(
        `created key ${result.key.id} (${result.key.maskValue}) for ${email}` +
          `${result.userCreated ? ' (new user)' : ''} with scopes ${result.key.scopes.join(',')}`,
      );
      out('the secret is shown only once:');
      out(result.secret);
      return 0;
    },
  },
  {
    name: 'keys list',
    summary: "List a user's keys (masked)",
    synopsis: '--email E',
    options: { email: { type: 'string' } },
    description: "Lists the user's keys: id, masked secret, scopes, restrictions, last use, revocation.",
    validate: (values, command) => void required(values, 'email', command),
    async run(context) {
      const { values, command, out } = context;
      const keys = await withKeys(context, (k) => k.listForEmail(required(values, 'email', command)));
      if (keys === null) throw new CliUsageError(`keys list: no user with e-mail ${String(values.email)}`);
      if (!keys.length) out('no keys');
      for (const k of keys) {
        out(
          [
            k.id,
            k.maskValue,
            `scopes=${k.scopes.join(',')}`,
            k.label ? `label=${k.label}` : null,
            k.scopedOrganizations ? `organizations=${k.scopedOrganizations.join(',')}` : null,
            k.scopedTeams ? `projects=${k.scopedTeams.join(',')}` : null,
            `last_used=${k.lastUsedAt?.toISOString() ?? 'never'}`,
            k.revokedAt ? `revoked=${k.revokedAt.toISOString()}` : 'active',
          ]
            .filter(Boolean)
            .join('  '),
        );
      }
      return 0;
    },
  },
  {
    name: 'keys revoke',
    activity: { scope: 'PersonalAPIKey' },
    summary: 'Revoke a key',
    synopsis: '--id ID',
    options: { id: { type: 'string' } },
    description: 'Revokes the key with this id; requests with it get 401 at once.',
    validate: (values, command) => void required(values, 'id', command),
    async run(context) {
      const id = required(context.values, 'id', context.command);
      const revoked = await withKeys(context, (k) => k.revoke(id));
      if (!revoked) throw new CliUsageError(`keys revoke: no active key with id ${id}`);
      context.out(`revoked key ${id}`);
      return 0;
    },
  },
];
