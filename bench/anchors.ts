import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Other engines the benches compare Stepwise with, installed on demand outside the
 * repository: they are not dependencies of Stepwise (aws-local-stepfunctions 3
 * declares engines node>=22, which package.json must not take on, though it runs on
 * Node 20). One folder under the OS's temp directory keeps them between runs.
 */
const ROOT = join(tmpdir(), "stepwise-bench-anchors");

/** The package `name`@`version`, installed under ROOT if it is not there yet, as `require` loads it. */
export function loadAnchor<T = unknown>(name: string, version: string): T {
  const manifest = join(ROOT, "node_modules", name, "package.json");
  const installed = existsSync(manifest)
    ? (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version
    : undefined;
  if (installed !== version) {
    mkdirSync(ROOT, { recursive: true });
    console.error(`installing ${name}@${version} under ${ROOT} (a bench anchor, not a dependency)`);
    // --prefix: npm would otherwise walk up to the nearest package.json (this repository's).
    execFileSync(
      "npm",
      ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", ROOT, `${name}@${version}`],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
  }
  return createRequire(join(ROOT, "package.json"))(name) as T;
}
