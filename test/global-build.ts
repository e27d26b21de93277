import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildProduct } from "../scripts/build.js";

/**
 * vitest global setup: end-to-end tests start `bin/stepwise.js`, which runs the
 * bundled dist/ (`npm ci` builds it; scripts/build.ts). While developing, the sources
 * may be newer: rebuild it then (about a second), once for the whole run, so every
 * test runs the code as it is.
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

export default async function setup(): Promise<void> {
  let built = 0;
  try {
    built = statSync(join(ROOT, "dist", "cli", "main.js")).mtimeMs;
  } catch {
    // not built
  }
  const newest = Math.max(
    statSync(join(ROOT, "scripts", "build.ts")).mtimeMs,
    ...SOURCES.map((d) => newestSource(join(ROOT, d))),
  );
  if (newest <= built) return;
  await buildProduct({ clean: false });
}
