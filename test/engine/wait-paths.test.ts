import { describe, expect, it } from "vitest";
import type { StateMachineDefinition, WaitState } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { execute } from "./helpers.js";

/**
 * A Wait whose SecondsPath or TimestampPath finds the wrong kind of value fails with
 * States.Runtime, as on AWS, and the cause names the path and what it found. The
 * causes AWS recorded (a missing or negative SecondsPath, a TimestampPath string
 * that is no timestamp: test/conformance/data/cases.jsonl) keep AWS's words.
 */
const PREFIX = "An error occurred while executing the state 'W' (entered at the event id #2). ";

const waitThen = (wait: Omit<WaitState, "Type" | "Next">): StateMachineDefinition => ({
  StartAt: "W",
  States: {
    W: { Type: "Wait", Next: "Done", ...wait } as WaitState,
    Done: { Type: "Succeed" },
  },
});

describe("Wait paths that find the wrong value", () => {
  it.each<[string, Omit<WaitState, "Type" | "Next">, Json, string]>([
    [
      "SecondsPath to a string",
      { SecondsPath: "$.s" },
      { s: "10" },
      `SecondsPath '$.s' must resolve to a non-negative integer number of seconds, got the string "10"`,
    ],
    [
      "SecondsPath to a fraction",
      { SecondsPath: "$.s" },
      { s: 1.5 },
      "SecondsPath '$.s' must resolve to a non-negative integer number of seconds, got the number 1.5",
    ],
    [
      "SecondsPath to null",
      { SecondsPath: "$.s" },
      { s: null },
      "SecondsPath '$.s' must resolve to a non-negative integer number of seconds, got null",
    ],
    [
      "SecondsPath to an object",
      { SecondsPath: "$.s" },
      { s: { n: 1 } },
      `SecondsPath '$.s' must resolve to a non-negative integer number of seconds, got an object {"n":1}`,
    ],
    [
      "TimestampPath to a number",
      { TimestampPath: "$.t" },
      { t: 1704067200 },
      `TimestampPath '$.t' must resolve to an ISO-8601 timestamp string such as "2024-01-01T00:00:00Z", got the number 1704067200`,
    ],
    [
      "TimestampPath to a boolean",
      { TimestampPath: "$.t" },
      { t: true },
      `TimestampPath '$.t' must resolve to an ISO-8601 timestamp string such as "2024-01-01T00:00:00Z", got the boolean true`,
    ],
    [
      "TimestampPath to nothing",
      { TimestampPath: "$.t" },
      {},
      "The TimestampPath parameter does not reference an input value: $.t",
    ],
    // AWS's recorded words, kept.
    [
      "SecondsPath to nothing",
      { SecondsPath: "$.s" },
      {},
      "The SecondsPath parameter does not reference an input value: $.s",
    ],
    [
      "SecondsPath to a negative number",
      { SecondsPath: "$.s" },
      { s: -1 },
      "The SecondsPath parameter references a negative value: $.s == -1",
    ],
    [
      "TimestampPath to a string that is no timestamp",
      { TimestampPath: "$.t" },
      { t: "tomorrow" },
      "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.t == tomorrow",
    ],
  ])("%s: States.Runtime naming the path and the value", async (_, wait, input, cause) => {
    const r = await execute(waitThen(wait), { input });
    expect(r).toMatchObject({ status: "FAILED", error: "States.Runtime", cause: PREFIX + cause });
  });
});
