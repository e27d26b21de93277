import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Stepwise's version from its package.json, found from sources (tsx) and from dist/ alike. */
export function stepwiseVersion(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "stepwise" && pkg.version) return pkg.version;
    } catch {
      // not here
    }
    if (dirname(dir) === dir) return "unknown";
  }
}
