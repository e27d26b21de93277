import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { RunEvent } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { ExecutionContext } from "../../engine/core/run.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";

/**
 * Golden replay (issue 19; as Temporal's SDK replays stored histories): journals
 * recorded by an earlier version of the engine (scripts/record-golden.ts, both
 * drivers) must replay to exactly the history that version wrote. A change that
 * replays an old journal differently is a change to running executions: it fails
 * here, and is made deliberately (re-record, and say why in the commit).
 */
interface Golden {
  id: string;
  driver: "memory" | "redis";
  features: string[];
  definition: StateMachineDefinition;
  context: ExecutionContext;
  journal: { runId: string; event: RunEvent }[];
  history: HistoryEvent[];
  status: string;
}

const DIR = fileURLToPath(new URL(".", import.meta.url));
const goldens = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(DIR, f), "utf8")) as Golden);

describe("golden replay", () => {
  it("has at least 30 recorded executions, from both drivers, across the features", () => {
    expect(goldens.length).toBeGreaterThanOrEqual(30);
    expect(goldens.some((g) => g.driver === "redis")).toBe(true);
    const features = new Set(goldens.flatMap((g) => g.features));
    for (const f of [
      "Map",
      "Parallel",
      "Retry",
      "Wait",
      "JSONata",
      "Variables",
      "TaskMock",
      "Callback",
      "Fork",
      "Redrive",
      "Pause",
    ]) {
      expect(features, f).toContain(f);
    }
  });

  for (const golden of goldens) {
    it(`${golden.driver}: ${golden.id}`, () => {
      const rebuilt = replay(compileProgram(golden.definition), golden.context, golden.journal);
      expect(rebuilt.history).toEqual(golden.history);
      const root = rebuilt.runs.get(golden.context.executionId)!;
      expect(root.status).toBe(golden.status);
    });
  }
});
