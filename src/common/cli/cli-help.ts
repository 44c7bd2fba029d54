import type { CliCommand, CliGroup } from '../feature/feature.js';

/** How a user runs the CLI: through npm, which puts the project's Node 24 first on the PATH. */
export const CLI = 'npm run cli --';

/** Rows `  <name>  <text>` aligned on the longest name (continuation lines of a text indented to its column). */
function table(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return rows
    .map(([name, text]) => `  ${name.padEnd(width)}${text.split('\n').join(`\n${' '.repeat(width + 2)}`)}`)
    .join('\n');
}

/** The --help of one command, from its declaration. */
export function commandHelp(command: CliCommand): string {
  const parts = [`Usage: ${CLI} ${command.name}${command.synopsis ? ` ${command.synopsis}` : ''}`];
  const listed = Object.entries(command.options ?? {}).filter(([, o]) => o.help);
  if (listed.length) parts.push(table(listed.map(([name, o]) => [`--${name}`, o.help!])));
  if (command.description) parts.push(command.description);
  return parts.join('\n\n');
}

/** The --help of a group: its commands and their summaries. */
export function groupHelp(group: CliGroup, commands: readonly CliCommand[]): string {
  const mine = commands.filter((c) => c.name.startsWith(`${group.name} `));
  const words = mine.map((c) => c.name.slice(group.name.length + 1));
  return [
    `Usage: ${CLI} ${group.name} <${words.join('|')}> [options]`,
    `${group.title}:\n${table(mine.map((c) => [c.name, c.summary]))}`,
    `Run "${CLI} ${group.name} <command> --help" for a command's options.`,
  ].join('\n\n');
}

/** The main --help: every command, then how to get a command's or a group's help. */
export function mainHelp(groups: readonly CliGroup[], commands: readonly CliCommand[]): string {
  const names = groups.map((g) => g.name).join(', ');
  return [
    `Usage: ${CLI} <command> [options]`,
    `Commands:\n${table(commands.map((c) => [c.name, c.summary]))}`,
    `Run "${CLI} <command> --help" (or "${CLI} help <command>") for a command's options` +
      (names ? `;\n"${CLI} <group> --help" lists the commands of a group (${names}).` : '.'),
  ].join('\n\n');
}
