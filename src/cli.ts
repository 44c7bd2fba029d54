import { exitOnOldNode } from './node-version.js';

/**
 * The operator CLI's entry point (`npm run cli -- <command>`, which runs `node dist/cli.js` on the project's Node).
 * It checks the Node.js version before loading the commands (cli-dispatch.ts), so an older Node fails with one line
 * saying what to type instead.
 */
const shellWord = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
exitOnOldNode('CLI', `\`npm run cli -- ${process.argv.slice(2).map(shellWord).join(' ') || '--help'}\``);
const { runCli } = await import('./cli-dispatch.js');
runCli(
  process.argv.slice(2),
  process.env,
  (l) => process.stdout.write(`${l}\n`),
  (l) => process.stderr.write(`${l}\n`),
)
  .then((code) => process.exit(code))
  .catch((e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  });
