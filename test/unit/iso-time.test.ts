import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../engine/core/timestamp.js";

/**
 * `isoTime` keeps the last day's text and computes the time of day: it must give
 * toISOString's text for every instant, in whatever order instants come (a
 * day boundary crossed either way, a far jump, the years toISOString writes
 * with a sign).
 */
describe("isoTime", () => {
  it("equals toISOString for any instant, in any order", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 253_402_300_799_999 }),
            fc.integer({ min: -62_198_755_200_000, max: 8_640_000_000_000_000 }),
            // Near midnight, where the kept day must change.
            fc.integer({ min: -5, max: 5 }).map((d) => 1_764_720_000_000 + d),
          ),
          { minLength: 1, maxLength: 50 },
        ),
        (instants) => {
          for (const ms of instants) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("walks a day millisecond by millisecond around its edges", () => {
    const midnight = Date.UTC(2026, 11, 3);
    for (let ms = midnight - 2000; ms < midnight + 2000; ms++) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    for (const ms of [0, 86_399_999, 86_400_000, 253_402_300_799_999, 253_402_300_800_000, -1]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });
});
