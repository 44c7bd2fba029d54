/** Where a bench run writes its results file, without overwriting an earlier run's. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `<dir>/<stem>.json`, or when a file of that name exists (an earlier run of the same day), the first of
 * `<stem>-2.json`, `<stem>-3.json`, … that does not.
 */
export function unusedResultsPath(dir: string, stem: string): string {
  let path = join(dir, `${stem}.json`);
  for (let n = 2; existsSync(path); n += 1) path = join(dir, `${stem}-${n}.json`);
  return path;
}
