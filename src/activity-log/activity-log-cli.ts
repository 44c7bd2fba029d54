import type { DataSource } from 'typeorm';
import { maskSecrets } from '../common/activity/activity-context.js';
import type { CliCommand, CliValues } from '../common/feature/feature.js';
import { isUuid } from '../common/validation/ids.js';
import { currentManager } from '../database/transactions.js';

/** The first item of a comma list option. */
function first(value: string | boolean | undefined): string | null {
  return typeof value === 'string' ? (value.split(',')[0]?.trim() ?? null) : null;
}

/**
 * Inserts the activity log entry of a CLI command (`activity` in its declaration) in the transaction its work
 * ran in: by the system (no user, no key), `activity` the command's name, the organization and project its
 * options name, its options (masked) as `detail.context`. One INSERT.
 */
export async function recordCliCommand(
  dataSource: DataSource,
  command: CliCommand,
  values: CliValues,
): Promise<void> {
  const organization = first(values.org) ?? first(values.organization) ?? first(values.organizations);
  const project = first(values.project) ?? first(values.projects);
  const teamId = project && /^\d{1,9}$/.test(project) ? Number(project) : null;
  const itemId =
    typeof values.id === 'string' ? values.id : typeof values.email === 'string' ? values.email : null;
  await currentManager(dataSource).query(
    `INSERT INTO activity_logs (organization_id, team_id, is_system, activity, scope, item_id, detail)
     SELECT coalesce($1::uuid, (SELECT p.organization_id FROM projects p WHERE p.id = $2::int)), $2::int, true,
            $3, $4, $5, $6::jsonb`,
    [
      organization && isUuid(organization) ? organization.toLowerCase() : null,
      teamId,
      command.name.replaceAll(' ', '_').replaceAll('-', '_'),
      command.activity?.scope ?? 'CLI',
      itemId?.slice(0, 200) ?? null,
      JSON.stringify({
        id: itemId,
        name: null,
        short_id: null,
        type: null,
        changes: null,
        trigger: null,
        context: { command: command.name, options: maskSecrets(values) },
      }),
    ],
  );
}
