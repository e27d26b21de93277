import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { VARIABLES } from "../../config/variables.js";
import { readmeRows } from "../../scripts/config-table.js";
import { ROOT } from "../e2e/processes.js";

/**
 * One configuration: only config/ reads the environment, every variable the code
 * names is in the catalogue (config/variables.ts), and README.md documents exactly
 * the catalogue, with its defaults.
 */
const PRODUCT = [
  "api",
  "cli",
  "config",
  "console",
  "engine",
  "runtime",
  "schema",
  "task-runners",
  "bin",
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === "dist" || entry.name === "node_modules" ? [] : sources(path);
    return /\.(ts|tsx|js|lua)$/.test(entry.name) ? [path] : [];
  });
}

const files = PRODUCT.flatMap((dir) => sources(join(ROOT, dir))).map((path) => ({
  path: relative(ROOT, path),
  text: readFileSync(path, "utf8"),
}));

describe("the configuration", () => {
  it("is read from process.env in config/index.ts and nowhere else", () => {
    const readers = files.filter((f) => /process\.env\b/.test(f.text)).map((f) => f.path);
    expect(readers).toEqual(["config/index.ts"]);
  });

  it("names no STEPWISE_ variable that the catalogue lacks", () => {
    const known = new Set(VARIABLES.map((v) => v.name));
    const named = new Map<string, string>();
    for (const file of files) {
      for (const match of file.text.matchAll(/\bSTEPWISE_[A-Z0-9_]*[A-Z0-9]\b/g)) {
        if (!known.has(match[0])) named.set(match[0], file.path);
      }
    }
    expect(Object.fromEntries(named)).toEqual({});
  });

  it("reads every variable of the catalogue (config/load.ts names each)", () => {
    const load = readFileSync(join(ROOT, "config/load.ts"), "utf8");
    const unread = VARIABLES.filter(
      (v) => !load.includes(`"${v.name}"`) && !load.includes(`.${v.name}`),
    );
    expect(unread.map((v) => v.name)).toEqual([]);
  });

  it("is documented in README.md exactly as the catalogue says, each variable once", () => {
    const rows = readmeRows(readFileSync(join(ROOT, "README.md"), "utf8"));
    expect(rows).toEqual(VARIABLES.map((v) => [`\`${v.name}\``, v.default, v.doc]));
    expect(new Set(rows.map((r) => r[0])).size).toBe(rows.length);
  });
});
