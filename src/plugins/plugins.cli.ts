import { CliUsageError, required } from '../common/cli/cli-args.js';
import type { CliCommand, CliGroup } from '../common/feature/feature.js';
import { isUuid } from '../common/validation/ids.js';

export const ORGS_GROUP: CliGroup = { name: 'orgs', title: 'Organizations (operator actions)' };

/** `--level` of `orgs set-plugins-access`: one of 0, 3, 6, 9. */
async function pluginsAccessLevel(raw: string, command: string): Promise<number> {
  const { PLUGINS_ACCESS_LEVELS } = await import('../organizations/organizations.service.js');
  const level = /^\d$/.test(raw) ? Number(raw) : NaN;
  if (!(PLUGINS_ACCESS_LEVELS as readonly number[]).includes(level)) {
    throw new CliUsageError(`${command}: --level must be one of ${PLUGINS_ACCESS_LEVELS.join(', ')}`);
  }
  return level;
}

export const ORGS_COMMANDS: CliCommand[] = [
  {
    name: 'orgs set-plugins-access',
    activity: { scope: 'Organization' },
    summary: "Set an organization's plugins_access_level (9 lets it publish global plugins)",
    synopsis: '--org ID --level N',
    options: {
      org: { type: 'string', help: "the organization's id (uuid)" },
      level: {
        type: 'string',
        help:
          "0 (no plugins), 3 (configure: use plugins in projects), 6 (install: manage the organization's own\n" +
          'plugin records; the default for new organizations) or 9 (root: also publish global plugin records,\n' +
          'visible to every organization)',
      },
    },
    description:
      'Raising an organization to 9 is an operator decision: its admins and owners can then publish plugins that\n' +
      'every tenant sees. Lowering it leaves the records it already published global (the output says how many).',
    async validate(values, command) {
      if (!isUuid(required(values, 'org', command))) {
        throw new CliUsageError(`${command}: --org must be an organization id (a uuid)`);
      }
      await pluginsAccessLevel(required(values, 'level', command), command);
    },
    async run({ values, command, out, withModules }) {
      const org = required(values, 'org', command);
      const level = await pluginsAccessLevel(required(values, 'level', command), command);
      const [{ PluginsModule }, { PluginsService }] = await Promise.all([
        import('./plugins.module.js'),
        import('./records/plugins.service.js'),
      ]);
      const change = await withModules([PluginsModule], (app) =>
        app.get(PluginsService).setOrganizationAccessLevel(org, level),
      );
      if (!change) throw new CliUsageError(`${command}: no organization with id ${org}`);
      out(
        `organization ${change.id} "${change.name}": plugins_access_level ${change.before} -> ${change.after}`,
      );
      if (change.after < 9 && change.globalPlugins > 0) {
        out(
          `note: it owns ${change.globalPlugins} global plugin record${change.globalPlugins === 1 ? '' : 's'}; ` +
            'they stay global (visible to every organization) and it can no longer change that',
        );
      }
      return 0;
    },
  },
];
