import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { build, type BuildOptions } from "esbuild";

/**
 * Builds what `bin/stepwise.js` runs: dist/cli/main.js (and dist/cli/api-process.js,
 * which `serve --api-processes N` forks, and dist/cli/evaluation-thread.js, the
 * thread heavy steps run on), bundled by esbuild with the dependencies in.
 *
 * Why a bundle and not tsc's one file per module: a process starts by loading its
 * modules, and loading ~370 of ours and ~900 of fastify, ajv, BullMQ and ioredis one
 * file at a time (resolve, stat, read, compile each) was most of `stepwise serve`'s
 * start-up: 2.1 s of CPU before it answered, 1.4 s bundled (scripts/start-cost.ts).
 * Every test that starts the binary, and every container start, pays it.
 *
 * - Code splitting keeps the CLI's lazy commands lazy: `stepwise executions list`
 *   loads the HTTP client's chunks, not fastify and BullMQ.
 * - Chunks sit beside the entries in dist/cli/, so that a path a module computes from
 *   its own `import.meta.url` (`./api-process.js`, `../../console/dist/`) resolves as it
 *   did from tsc's dist/cli/ and dist/api/plugins/.
 * - msgpackr-extract (a native addon msgpackr loads when present) stays a package:
 *   its loader finds its prebuilt binary relative to its own files.
 * - Types are not checked here (esbuild strips them): `npm run lint` does, in CI.
 *
 *   npm run build            # also run by `npm ci` (prepare) and by the tests when sources changed
 */

const ROOT = resolve(import.meta.dirname, "..");
export const DIST = resolve(ROOT, "dist");

export const productBuildOptions = {
  absWorkingDir: ROOT,
  entryPoints: ["cli/main.ts", "cli/api-process.ts", "cli/evaluation-thread.ts"],
  outbase: ".",
  outdir: DIST,
  chunkNames: "cli/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["msgpackr-extract"],
  // CommonJS dependencies call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __stepwiseCreateRequire } from 'node:module'; const require = __stepwiseCreateRequire(import.meta.url);",
  },
  sourcemap: "linked",
  legalComments: "linked",
  logLevel: "warning",
} satisfies BuildOptions;

/**
 * Builds into a staging directory, then moves each file into dist/ by rename (atomic):
 * chunks before the entries that import them. A `stepwise` process started while
 * another test run rebuilds (two runs of vitest side by side) finds either the old
 * entry with its chunks or the new one with its chunks, never a half-written file or
 * an emptied dist/. `clean` (npm run build, prepare) also removes the chunks of
 * earlier builds; the tests' rebuild leaves them, for processes still loading them.
 */
export async function buildProduct({ clean = true }: { clean?: boolean } = {}): Promise<void> {
  const staging = `${DIST}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  try {
    await build({ ...productBuildOptions, outdir: staging });
    const built = filesUnder(staging).map((path) => relative(staging, path));
    const entries = new Set(["cli/main.js", "cli/api-process.js"]);
    const ordered = [
      ...built.filter((f) => !entries.has(f)),
      ...built.filter((f) => entries.has(f)),
    ];
    for (const file of ordered) {
      mkdirSync(dirname(join(DIST, file)), { recursive: true });
      renameSync(join(staging, file), join(DIST, file));
    }
    if (clean) {
      const keep = new Set(built);
      for (const path of filesUnder(DIST)) {
        if (!keep.has(relative(DIST, path))) rmSync(path, { force: true });
      }
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function filesUnder(dir: string): string[] {
  let files: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return files;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    files = entry.isDirectory() ? [...files, ...filesUnder(path)] : [...files, path];
  }
  return files;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  await buildProduct();
}
