import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's directory, where a user types the commands the README and the service print. */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The PATH of a user's shell: this one without any node_modules/.bin directory, which npm (running the tests)
 * put first. Its `node` is the machine's own, which may be older than the Node 24 the project brings.
 */
export function userShellPath(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir && !dir.includes('node_modules'))
    .join(delimiter);
}

/** The command a message tells a user to type (`npm run cli -- …`, up to a parenthesis or the end). */
export function typedCommand(message: string): string {
  const command = /npm run cli -- [^(]+?(?= \(|$)/.exec(message)?.[0];
  if (!command) throw new Error(`no npm run cli command in: ${message}`);
  return command;
}

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` as typed in a user's shell (`shell -c`, in the project's directory, with userShellPath() and none of
 * the test run's npm or NODE_OPTIONS variables), with `env` added.
 */
export function runAsTyped(
  command: string,
  env: Record<string, string> = {},
  shell: 'sh' | 'bash' = 'sh',
): Promise<ShellResult> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(npm_|NODE_OPTIONS$|DATABASE_URL$|INIT_CWD$|EMBEDDED_PG_)/i.test(name),
    ),
  );
  return new Promise((resolve) => {
    execFile(
      shell,
      ['-c', command],
      {
        cwd: PROJECT_ROOT,
        // npm's "new version available" notice would be a stray line on stderr.
        env: {
          ...base,
          PATH: userShellPath(),
          LOG_LEVEL: 'silent',
          npm_config_update_notifier: 'false',
          ...env,
        },
        timeout: 120_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The machine's own `node` on userShellPath(), when there is one. */
export function systemNode(): string | null {
  for (const dir of userShellPath().split(delimiter)) {
    if (existsSync(join(dir, 'node'))) return join(dir, 'node');
  }
  return null;
}
