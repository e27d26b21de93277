import { describe, expect, it } from "vitest";
import { LIMITS, shapeOf } from "./shape.js";

/**
 * runtime/ in rooms (issue 42): a newcomer walks it by folder, so each folder stays
 * small enough to read at a glance and each file and function short enough to hold
 * in mind. `npx tsx scripts/runtime-shape.ts` prints the same figures.
 */
describe("runtime/ layout", () => {
  const shape = shapeOf("runtime");

  it(`has no folder with more than ${LIMITS.filesPerFolder} files at its top level`, () => {
    expect(shape.folders.filter((f) => f.files > LIMITS.filesPerFolder)).toEqual([]);
  });

  it(`has no source file over ${LIMITS.linesPerFile} lines`, () => {
    expect(shape.longFiles).toEqual([]);
  });

  it(`has no function over ${LIMITS.linesPerFunction} lines`, () => {
    expect(shape.longFunctions).toEqual([]);
  });

  it("measures what it claims to (a long function is found)", () => {
    const found = shapeOf("test/runtime/fixtures-shape");
    expect(found.longFunctions.map((f) => f.name)).toEqual(["tooLong"]);
    expect(found.longFiles).toEqual([]);
  });
});
