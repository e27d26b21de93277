import { describe, expect, it } from "vitest";
import { seededRandom } from "../../engine/core/random.js";
import { runExecution } from "../../engine/drivers/memory.js";
import { compileProgram } from "../../engine/program.js";
import { parseInstant, parseMillis } from "../../engine/core/timestamp.js";
import { validateDefinition } from "../../schema/index.js";

/**
 * One timestamp module, two named profiles. What the validator accepts in a
 * definition (rfc3339) the engine's Wait reads too (offsetDateTime), at the same
 * instant: issue 13's `2030-06-30T23:59:60Z` passed validation, then failed at run time.
 */
const wait = (timestamp: string) => ({
  StartAt: "W",
  States: { W: { Type: "Wait", Timestamp: timestamp, End: true } },
});

describe("timestamp profiles", () => {
  it("a leap second is refused by the validator, not at run time", () => {
    const result = validateDefinition(wait("2030-06-30T23:59:60Z") as never);
    expect(result.valid).toBe(false);
    expect(result.diagnostics.map((d) => d.path)).toContain("/States/W/Timestamp");
    expect(parseInstant("2030-06-30T23:59:60Z", "offsetDateTime")).toBeUndefined();
  });

  it.each([
    ["2016-03-14T01:59:00Z", true, true],
    ["2016-03-14T01:59:00.123456789012Z", true, true],
    ["2016-03-14T01:59:00+23:59", true, true],
    ["2016-03-14T01:59Z", false, true],
    ["2016-03-14T01:59:00z", false, true],
    ["2016-03-14t01:59:00Z", false, false],
    ["2016-02-30T00:00:00Z", false, false],
    ["2016-03-14T24:00:00Z", false, false],
    ["2016-03-14T01:59:00+24:00", false, false],
    ["2016-03-14", false, false],
  ])("%s: rfc3339 %s, offsetDateTime %s", (text, strict, lenient) => {
    expect(parseInstant(text, "rfc3339") !== undefined).toBe(strict);
    expect(parseInstant(text, "offsetDateTime") !== undefined).toBe(lenient);
  });

  it("every timestamp the validator accepts, the engine reads at the same instant", () => {
    const random = seededRandom("timestamps");
    const pick = (choices: string[]) => choices[Math.floor(random.next() * choices.length)]!;
    const two = (max: number) => String(Math.floor(random.next() * max)).padStart(2, "0");
    let accepted = 0;
    for (let i = 0; i < 5000; i++) {
      const text =
        `${pick(["0001", "1970", "2000", "2024", "2100", "9999"])}-${two(14)}-${two(33)}` +
        `${pick(["T", "t", " "])}${two(26)}:${two(62)}${pick([`:${two(62)}`, ""])}` +
        `${pick(["", ".5", ".123456789", ".1234567890123"])}` +
        `${pick(["Z", "z", "+00:00", `-${two(25)}:${two(61)}`, ""])}`;
      const strict = parseInstant(text, "rfc3339");
      if (strict === undefined) continue;
      accepted++;
      expect(parseInstant(text, "offsetDateTime"), text).toEqual(strict);
      const valid = validateDefinition(wait(text) as never).valid;
      expect(valid, text).toBe(true);
    }
    expect(accepted).toBeGreaterThan(100);
  });

  it("a Wait on a valid timestamp runs", async () => {
    const result = await runExecution(
      compileProgram(wait("2030-06-30T23:59:59.999+02:00") as never),
      {
        startTime: "2030-06-30T00:00:00Z",
      },
    );
    expect(result.status).toBe("SUCCEEDED");
    expect(parseMillis("2030-06-30T23:59:59.999+02:00", "offsetDateTime")).toBe(
      Date.parse("2030-06-30T21:59:59.999Z"),
    );
  });
});
