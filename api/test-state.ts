import type { JsonObject } from "../engine/core/json.js";
import {
  isolatedDefinition,
  testState,
  TestStateError,
  type TestStateRequest,
  type TestStateResult,
} from "../engine/testing/test-state.js";
import { TransitionLimitExceeded } from "../engine/drivers/memory.js";
import { check } from "./definition.js";
import { apiError } from "./errors.js";

/**
 * TestState for both APIs: the state is validated as a machine of its own (so a
 * malformed state is InvalidDefinition, never a crash), then run on the pure step
 * (engine/testing/test-state.ts).
 */
export async function runTestState(
  request: Omit<TestStateRequest, "now" | "seed">,
  serves: (resource: string) => boolean,
): Promise<TestStateResult> {
  const full: TestStateRequest = {
    ...request,
    now: new Date().toISOString(),
    seed: "test-state",
  };
  let machine;
  try {
    machine = isolatedDefinition(full);
  } catch (err) {
    if (err instanceof TestStateError)
      throw apiError("InvalidRequest", { location: "body", reason: err.message });
    throw err;
  }
  const checked = check({ source: machine as unknown as JsonObject }, serves);
  if (!checked.valid) {
    const first = checked.diagnostics.find((d) => d.severity === "error");
    throw apiError(
      "InvalidDefinition",
      { reason: first ? `${first.message} at ${first.path || "/"}` : "the validator rejected it" },
      checked.diagnostics,
    );
  }
  try {
    return await testState(full);
  } catch (err) {
    if (err instanceof TestStateError)
      throw apiError("InvalidRequest", { location: "body", reason: err.message });
    if (err instanceof TransitionLimitExceeded)
      throw apiError("InvalidRequest", {
        location: "definition",
        reason: "the state loops to itself",
      });
    throw err;
  }
}
