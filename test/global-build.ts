import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * vitest global setup: end-to-end tests start `bin/stepwise.js`, which runs the
 * compiled dist/ (`npm ci` builds it). While developing, the sources may be newer:
 * rebuild it then, once for the whole run, so every test runs the code as it is.
 */
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const SOURCES = ["api", "cli", "config", "engine", "runtime", "schema", "task-runners"];

/** The newest modification time of the TypeScript sources under `dir`. */
export function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

export default function setup(): void {
  let built = 0;
  try {
    built = statSync(join(ROOT, "dist", "cli", "main.js")).mtimeMs;
  } catch {
    // not built
  }
  const newest = Math.max(...SOURCES.map((d) => newestSource(join(ROOT, d))));
  if (newest <= built) return;
  const build = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: ROOT,
      encoding: "utf8",
    },
  );
  if (build.status !== 0) throw new Error(`building dist/ failed:\n${build.stdout}${build.stderr}`);
}
