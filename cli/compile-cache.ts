import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";

/**
 * Loads a CommonJS bundle with V8's code cache, as the v8-compile-cache package does
 * (Node 20 has no compile cache of its own; 22 has module.enableCompileCache):
 * compiling the ~1 MB of JavaScript of `stepwise test` took as long as running its
 * tests. The first process compiles as usual and, once its command is done, writes the
 * code V8 compiled (the functions it ran included) to the cache; the next ones
 * deserialize it instead of parsing and compiling.
 *
 * Safe by construction:
 * - `file` is immutable: its name carries its content's hash (scripts/build.ts), and
 *   the cache entry is named by it, `key` (the command: each keeps the functions it
 *   runs), the node version, the architecture and node's command-line options (V8
 *   rejects code cached under other flags: `node --max-semi-space-size=64` has entries
 *   of its own). V8 itself rejects data from another V8 version or other flags
 *   (`cachedDataRejected`, as for flags set in NODE_OPTIONS, which this module does
 *   not read: the environment is config/'s): then the source is compiled as without a
 *   cache, and the entry is rewritten.
 * - The cache directory is the user's own (`<tmpdir>/stepwise-compile-cache-<uid>`,
 *   mode 0700, owned by the process's uid, else unused): code from it runs as ours.
 * - Entries are written to a temporary name and renamed, so a reader sees a whole one
 *   or none; any error (a read-only or full disk, another process racing) only means
 *   no cache, never a failure.
 * - Writing an entry removes the same command's entries of other builds written more
 *   than a day ago, so rebuilds do not fill the directory (~1 MB an entry).
 */
export interface CompiledBundle {
  exports: Record<string, unknown>;
  /** Writes the code cache if there was none (or V8 rejected it). Never throws. */
  saveCache(): void;
}

const WRAPPER = "(function (exports, require, module, __filename, __dirname) { ";

export function loadWithCodeCache(file: string, key: string): CompiledBundle {
  const source = readFileSync(file, "utf8");
  const entry = cacheEntry(file, key);
  let cachedData: Buffer | undefined;
  if (entry !== undefined) {
    try {
      cachedData = readFileSync(entry);
    } catch {
      // no entry yet
    }
  }
  const script = new Script(`${WRAPPER}${source}\n})`, { filename: file, cachedData });
  const module = { exports: {} as Record<string, unknown> };
  const init = script.runInThisContext() as (...args: unknown[]) => void;
  init.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  let saved = cachedData !== undefined && script.cachedDataRejected !== true;
  return {
    exports: module.exports,
    saveCache() {
      if (saved || entry === undefined) return;
      saved = true;
      const temporary = `${entry}.${process.pid}.tmp`;
      try {
        writeFileSync(temporary, script.createCachedData());
        renameSync(temporary, entry);
        removeStale(entry, basename(file));
      } catch {
        // a read-only or full disk: no cache
      }
    },
  };
}

/** The cache entry's path, or undefined when there is no private directory for it. */
function cacheEntry(file: string, key: string): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const dir = join(tmpdir(), `stepwise-compile-cache-${uid}`);
  try {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      mkdirSync(dir, { mode: 0o700 });
      stat = lstatSync(dir);
    }
    // Another user's directory, or one others may write to: not ours to run code from.
    if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o077) !== 0) return undefined;
  } catch {
    return undefined;
  }
  const node = `${process.version}-${process.arch}-${optionsHash()}`;
  return join(dir, `${basename(file)}.${key}.${node}.v8cache`);
}

/** FNV-1a of node's command-line options, in hex: the V8 flags the cache was made under. */
function optionsHash(): string {
  const options = process.execArgv.join("\n");
  let hash = 0x811c9dc5;
  for (let i = 0; i < options.length; i++) {
    hash = Math.imul(hash ^ options.charCodeAt(i), 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Removes the entries of `entry`'s command and node written for other bundles over a day ago. */
function removeStale(entry: string, bundle: string): void {
  const dir = dirname(entry);
  const suffix = basename(entry).slice(bundle.length);
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(suffix) || name.startsWith(bundle)) continue;
    const path = join(dir, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > DAY_MS) rmSync(path, { force: true });
    } catch {
      // removed by another process
    }
  }
}
