import { describe, expect, it } from "vitest";
import { DATA_LIMIT_BYTES, exceedsDataLimit } from "../../engine/step-context.js";
import { execute, ofType, single } from "./helpers.js";

// AWS "Error names", States.DataLimitExceeded: reported when "the output of a state is
// larger than the payload size quota" (256 KiB of UTF-8) or "the input of a state is
// larger than the payload size quota after Parameters processing".
const LIMIT = 256 * 1024;

/** A JSON string value whose JSON text (quotes included) is exactly `bytes` UTF-8 bytes. */
function jsonStringOfBytes(bytes: number, char = "x"): string {
  const charBytes = new TextEncoder().encode(char).length;
  return char.repeat((bytes - 2) / charBytes);
}

describe("the 256 KiB data limit", () => {
  it("is 256 KiB of UTF-8", () => {
    expect(DATA_LIMIT_BYTES).toBe(LIMIT);
    expect(exceedsDataLimit(JSON.stringify(jsonStringOfBytes(LIMIT)))).toBe(false);
    expect(exceedsDataLimit(JSON.stringify(jsonStringOfBytes(LIMIT + 1)))).toBe(true);
    // 'é' is two bytes in UTF-8 but one UTF-16 unit: the limit counts bytes.
    const accented = jsonStringOfBytes(LIMIT + 2, "é");
    expect(JSON.stringify(accented).length).toBeLessThan(LIMIT);
    expect(exceedsDataLimit(JSON.stringify(accented))).toBe(true);
  });

  it("an output of exactly 256 KiB passes", async () => {
    const r = await execute(single({ Type: "Pass", End: true }), {
      input: jsonStringOfBytes(LIMIT),
    });
    expect(r.status).toBe("SUCCEEDED");
  });

  it("a Pass output one byte over fails with States.DataLimitExceeded", async () => {
    const r = await execute(single({ Type: "Pass", End: true }, "Big"), {
      input: jsonStringOfBytes(LIMIT + 1),
    });
    expect(r).toMatchObject({ status: "FAILED", error: "States.DataLimitExceeded" });
    expect(r.cause).toContain("'Big'");
    expect(ofType(r.history, "PassStateExited")).toEqual([]);
  });

  it("multi-byte characters count by their UTF-8 size", async () => {
    const r = await execute(single({ Type: "Pass", End: true }), {
      input: jsonStringOfBytes(LIMIT + 2, "é"),
    });
    expect(r.error).toBe("States.DataLimitExceeded");
  });

  it("a state output grown past the limit by ResultPath fails", async () => {
    const half = jsonStringOfBytes(LIMIT / 2 + 100);
    const r = await execute(
      single({
        Type: "Pass",
        Parameters: { "copy.$": "$.a" },
        ResultPath: "$.b",
        End: true,
      }),
      { input: { a: half } },
    );
    expect(r.error).toBe("States.DataLimitExceeded");
  });

  it("a task result over the limit fails the execution", async () => {
    const r = await execute(single({ Type: "Task", Resource: "big", End: true }), {
      tasks: { big: () => jsonStringOfBytes(LIMIT + 10) },
    });
    expect(r.error).toBe("States.DataLimitExceeded");
  });

  // "The output from a connector is larger than payload size quota": the task result
  // itself is checked, before ResultPath could discard it.
  it("a task result over the limit fails even when ResultPath null discards it", async () => {
    const r = await execute(
      single({ Type: "Task", Resource: "big", ResultPath: null, End: true }),
      {
        input: { small: true },
        tasks: { big: () => jsonStringOfBytes(LIMIT + 10) },
      },
    );
    expect(r).toMatchObject({ status: "FAILED", error: "States.DataLimitExceeded" });
  });

  it("a Task input over the limit after Parameters fails before the task runs", async () => {
    let called = false;
    const half = jsonStringOfBytes(LIMIT / 2 + 100);
    const r = await execute(
      single({
        Type: "Task",
        Resource: "r",
        Parameters: { "a.$": "$.half", "b.$": "$.half" },
        End: true,
      }),
      {
        input: { half },
        tasks: {
          r: () => {
            called = true;
            return "ok";
          },
        },
      },
    );
    expect(r).toMatchObject({ status: "FAILED", error: "States.DataLimitExceeded" });
    expect(called).toBe(false);
  });
});
