import { parseArgs } from 'node:util';
import { CliUsageError } from './common/cli/cli-args.js';
import { commandHelp, groupHelp, mainHelp } from './common/cli/cli-help.js';
import type { CliCommand, CliGroup, Feature } from './common/feature/feature.js';
import { ConfigError } from './config/config.js';
import { FEATURES } from './features.js';

/**
 * The operator CLI: a dispatcher over the commands the features declare (`cli` of their manifests). Its
 * help is generated from the declarations, and nothing of the application is loaded until a command runs. Run by
 * cli.ts (`node dist/cli.js`), which checks the Node.js version first.
 */
export { CliUsageError };

type Out = (line: string) => void;

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';

/** Runs one CLI command of `features`; returns the exit code. Exposed for tests. */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: Out,
  err: Out,
  features: readonly Feature[] = FEATURES,
): Promise<number> {
  const commands = new Map<string, CliCommand>(
    features.flatMap((f) => (f.cli ?? []).map((c) => [c.name, c])),
  );
  const groups = new Map<string, CliGroup>(
    features.flatMap((f) => (f.cliGroups ?? []).map((g) => [g.name, g])),
  );
  const all = [...commands.values()];
  const help = (topic: string): string | undefined => {
    if (topic === 'main') return mainHelp([...groups.values()], all);
    const group = groups.get(topic);
    if (group) return groupHelp(group, all);
    const command = commands.get(topic);
    return command && commandHelp(command);
  };
  /** The command named by the start of `argv` (one word, or a group and its command) and the rest. */
  const splitCommand = (words: string[]): { command: string; args: string[] } => {
    const [first = '', second, ...rest] = words;
    if (groups.has(first) && second !== undefined && !second.startsWith('-') && !isHelp(second)) {
      return { command: `${first} ${second}`, args: rest };
    }
    return { command: first, args: words.slice(1) };
  };

  if (!argv.length) {
    out(help('main')!);
    return 2;
  }
  if (isHelp(argv[0])) {
    // `--help` alone, or `help <command>`.
    const topic = argv.length > 1 ? splitCommand(argv.slice(1)).command : 'main';
    const text = help(topic);
    if (!text) {
      err(`unknown command '${argv.slice(1).join(' ')}' (try --help)`);
      return 2;
    }
    out(text);
    return 0;
  }
  const { command: name, args } = splitCommand(argv);
  const asksHelp = args.some((a) => a === '--help' || a === '-h');
  if (groups.has(name)) {
    // A group lists its commands: as the answer to `keys --help` (or `keys help`), as a usage error alone.
    if (asksHelp || isHelp(args[0])) {
      out(help(name)!);
      return 0;
    }
    if (!args.length) {
      out(help(name)!);
      return 2;
    }
  }
  const command = commands.get(name);
  if (!command) {
    err(`unknown command '${argv.slice(0, groups.has(argv[0]) ? 2 : 1).join(' ')}' (try --help)`);
    return 2;
  }
  if (asksHelp) {
    out(commandHelp(command));
    return 0;
  }

  try {
    let values: Record<string, string | boolean | undefined>;
    try {
      const options = Object.fromEntries(
        Object.entries(command.options ?? {}).map(([k, o]) => [k, { type: o.type }]),
      );
      values = parseArgs({
        args,
        options: { ...options, help: { type: 'boolean' } },
        strict: true,
        allowPositionals: false,
      }).values as Record<string, string | boolean | undefined>;
    } catch (e) {
      throw new CliUsageError(`${name}: ${(e as Error).message.split('\n')[0]}`);
    }
    // Validate the arguments fully before touching the database.
    await command.validate?.(values, name);
    const { runCommand } = await import('./cli-runtime.js');
    return await runCommand(command, values, env, features, out, err);
  } catch (e) {
    if (e instanceof CliUsageError) {
      err(e.message);
      return 2;
    }
    if (e instanceof ConfigError) {
      err(e.message.replace(/\n\s*/g, ' '));
      return 2;
    }
    // Input the service rejects (unknown scope, bad label...) is a one-line error too.
    err(`${name}: ${(e as Error).message.split('\n')[0]}`);
    return 1;
  }
}
