import type { PluginChange } from '../activity/plugin-activity.entity.js';
import type { SourceChanges } from '../rules/plugin-rules.js';
import type { PluginEntity } from './plugin.entity.js';

/** The source files of `source` records: the changes a request makes to them, and how they are answered. */

export function isSourceRecord(entity: PluginEntity): boolean {
  return entity.pluginType === 'source';
}

/**
 * `{filename: text}` in the order given. A null-prototype object with every name an own data property, so a file
 * named `__proto__`, `constructor` or `toString` is a key like any other (and serialises as one).
 */
export function toSourceMap(files: { filename: string; source: string }[]): Record<string, string> {
  const map = Object.create(null) as Record<string, string>;
  for (const f of files)
    Object.defineProperty(map, f.filename, {
      value: f.source,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return map;
}

/** What the history keeps of a source file: its size, never its text. */
function sizeOf(text: string): { bytes: number } {
  return { bytes: Buffer.byteLength(text, 'utf8') };
}

/**
 * Applies `{filename: text | null}` (null deletes; already checked) to `files` in place: the files to write and
 * to delete, and the history entries (sizes only) of what changed.
 */
export function applySourceChanges(
  files: Map<string, string>,
  body: SourceChanges,
): { changes: PluginChange[]; writes: { filename: string; source: string }[]; deletes: string[] } {
  const changes: PluginChange[] = [];
  const writes: { filename: string; source: string }[] = [];
  const deletes: string[] = [];
  for (const [filename, text] of Object.entries(body as Record<string, string | null>)) {
    const before = files.get(filename);
    const field = `source/${filename}`;
    if (text === null) {
      if (before === undefined) continue;
      deletes.push(filename);
      files.delete(filename);
      changes.push({ field, action: 'deleted', before: sizeOf(before), after: null });
    } else if (before !== text) {
      writes.push({ filename, source: text });
      files.set(filename, text);
      changes.push({
        field,
        action: before === undefined ? 'created' : 'changed',
        before: before === undefined ? null : sizeOf(before),
        after: sizeOf(text),
      });
    }
  }
  return { changes, writes, deletes };
}
