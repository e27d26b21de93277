import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// The determinism boundary (DESIGN.md, STYLE.md): the interpreter never does I/O,
// never reads the clock and never draws randomness of its own. Drivers
// (engine/drivers) may read the clock; nothing in engine/ may import I/O modules.
const ENGINE = resolve(import.meta.dirname, "../../engine");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

const FORBIDDEN_IMPORTS =
  /from\s+["'](node:[^"']+|fs|net|http|https|child_process|ioredis|bullmq|fastify)["']/;
const CLOCK_OR_RANDOM =
  /Date\.now\(|new Date\(\)|Math\.random\(|setTimeout\(|setInterval\(|performance\.now\(/;

describe("engine purity", () => {
  const files = sources(ENGINE);

  it("finds the engine sources", () => {
    expect(files.length).toBeGreaterThan(30);
  });

  it("imports no I/O module anywhere in engine/", () => {
    const offenders = files.filter((f) => FORBIDDEN_IMPORTS.test(readFileSync(f, "utf8")));
    expect(offenders.map((f) => relative(ENGINE, f))).toEqual([]);
  });

  it("reads no clock and draws no randomness outside the drivers", () => {
    const offenders = files
      .filter((f) => !relative(ENGINE, f).startsWith("drivers"))
      .filter((f) =>
        CLOCK_OR_RANDOM.test(readFileSync(f, "utf8").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "")),
      );
    expect(offenders.map((f) => relative(ENGINE, f))).toEqual([]);
  });
});
