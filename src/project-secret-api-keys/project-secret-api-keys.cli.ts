import { CliUsageError, required } from '../common/cli/cli-args.js';
import type { CliCommand, CliContext, CliGroup } from '../common/feature/feature.js';
import type { ProjectSecretApiKeysService } from './project-secret-api-keys.service.js';

export const PROJECT_KEYS_GROUP: CliGroup = { name: 'project-keys', title: 'Project secret API keys' };

/** `--project`: a project id. */
function projectId(values: CliContext['values'], command: string): number {
  const raw = required(values, 'project', command);
  if (!/^\d{1,10}$/.test(raw) || Number(raw) < 1 || Number(raw) > 2147483647) {
    throw new CliUsageError(`${command}: --project must be a project id`);
  }
  return Number(raw);
}

async function withKeys<T>(
  context: CliContext,
  fn: (keys: ProjectSecretApiKeysService) => Promise<T>,
): Promise<T> {
  const [{ ProjectSecretApiKeysModule }, { ProjectSecretApiKeysService }] = await Promise.all([
    import('./project-secret-api-keys.module.js'),
    import('./project-secret-api-keys.service.js'),
  ]);
  return context.withModules([ProjectSecretApiKeysModule], (app) => fn(app.get(ProjectSecretApiKeysService)));
}

export const PROJECT_KEYS_COMMANDS: CliCommand[] = [
  {
    name: 'project-keys create',
    activity: { scope: 'ProjectSecretAPIKey' },
    summary: 'Create a project secret API key (phs_…), which belongs to the project, not to a person',
    synopsis: '--project ID --label L --scopes S',
    options: {
      project: { type: 'string', help: "the project's id" },
      label: {
        type: 'string',
        help: 'a name for the key, unique within the project (at most 40 characters)',
      },
      scopes: { type: 'string', help: 'a comma list of the scopes such a key may carry: feature_flag:read' },
    },
    description:
      'Prints the new secret once, as the last line of standard output. A project has at most 10 keys.',
    validate(values, command) {
      projectId(values, command);
      required(values, 'label', command);
      required(values, 'scopes', command);
    },
    async run(context) {
      const { values, command, out } = context;
      const project = projectId(values, command);
      const created = await withKeys(context, (keys) =>
        keys
          .createAsOperator({
            projectId: project,
            label: required(values, 'label', command),
            scopes: required(values, 'scopes', command),
          })
          .catch((error: unknown) => {
            throw new CliUsageError(`${command}: ${(error as Error).message}`);
          }),
      );
      if (!created) throw new CliUsageError(`${command}: no project with id ${project}`);
      out(
        `created project secret API key ${created.id} (${created.mask_value}) "${created.label}" for project ` +
          `${project} with scopes ${created.scopes.join(',')}`,
      );
      out('the secret is shown only once:');
      out(created.value);
      return 0;
    },
  },
  {
    name: 'project-keys list',
    summary: "List a project's secret API keys (masked)",
    synopsis: '--project ID',
    options: { project: { type: 'string', help: "the project's id" } },
    description: "Lists the project's keys: id, masked secret, label, scopes, creator, last use.",
    validate: (values, command) => void projectId(values, command),
    async run(context) {
      const { values, command, out } = context;
      const project = projectId(values, command);
      const keys = await withKeys(context, (k) => k.listForProject(project));
      if (keys === null) throw new CliUsageError(`${command}: no project with id ${project}`);
      if (!keys.length) out('no keys');
      for (const k of keys) {
        out(
          [
            k.id,
            k.mask_value,
            `label=${k.label}`,
            `scopes=${k.scopes.join(',')}`,
            `created_by=${k.created_by?.email ?? 'operator'}`,
            `last_used=${k.last_used_at ?? 'never'}`,
          ].join('  '),
        );
      }
      return 0;
    },
  },
  {
    name: 'project-keys revoke',
    activity: { scope: 'ProjectSecretAPIKey' },
    summary: 'Delete a project secret API key',
    synopsis: '--id ID',
    options: { id: { type: 'string', help: "the key's id" } },
    description: 'Deletes the key with this id; requests with it get 401 at once.',
    validate: (values, command) => void required(values, 'id', command),
    async run(context) {
      const id = required(context.values, 'id', context.command);
      if (!(await withKeys(context, (k) => k.deleteAsOperator(id)))) {
        throw new CliUsageError(`${context.command}: no project secret API key with id ${id}`);
      }
      context.out(`revoked project secret API key ${id}`);
      return 0;
    },
  },
];
