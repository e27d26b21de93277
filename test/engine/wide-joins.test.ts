import { describe, expect, it } from "vitest";
import type { State, StateMachineDefinition } from "../../engine/core/definition.js";
import { SPAWN_BATCH } from "../../engine/flow/join.js";
import { planOps } from "../../runtime/commit/effects.js";
import { encodeArgs } from "../../runtime/store/wire.js";
import { EXECUTION_ARN_PREFIX } from "../../runtime/store/ids.js";

/** The Redis driver's ops take ids of this deployment's ARN form (runtime/store/ids.ts). */
const EXEC = `${EXECUTION_ARN_PREFIX}m:e`;
import { effectsOf, execute, ofType, single, Stepper } from "./helpers.js";

// Wide joins start their children in bounded batches (engine/flow/join.ts,
// SPAWN_BATCH): no single step, and so no single durable commit, grows with the
// number of Map items or Parallel branches (issue 20).

const passItem: State = {
  Type: "Map",
  ItemProcessor: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
  End: true,
};

function wideMap(maxConcurrency?: number): StateMachineDefinition {
  const map = { ...passItem } as Record<string, unknown>;
  if (maxConcurrency !== undefined) map.MaxConcurrency = maxConcurrency;
  return single(map as unknown as State, "M");
}

function wideParallel(branches: number): StateMachineDefinition {
  return single(
    {
      Type: "Parallel",
      Branches: Array.from({ length: branches }, (_, i) => ({
        StartAt: `B${i}`,
        States: { [`B${i}`]: { Type: "Pass", Result: i, End: true } },
      })),
      End: true,
    },
    "Par",
  );
}

/** How many children each step spawned, in step order (steps that spawned none left out). */
function spawnSizes(stepper: Stepper): number[] {
  return effectsOf(stepper.effects, "SpawnChildren").map((e) => e.children.length);
}

describe("wide joins start in batches", () => {
  it("an unbounded Map over 2.5 batches: every item runs once, in order, with one history event each", async () => {
    const n = Math.floor(SPAWN_BATCH * 2.5);
    const items = Array.from({ length: n }, (_, i) => i);
    const result = await execute(wideMap(), { input: items });
    expect(result.status).toBe("SUCCEEDED");
    expect(result.output).toEqual(items);
    const started = ofType(result.history, "MapIterationStarted");
    expect(started).toHaveLength(n);
    expect(started.map((e) => e.mapIterationStartedEventDetails?.index)).toEqual(items);
    expect(ofType(result.history, "MapIterationSucceeded")).toHaveLength(n);
    // Event ids stay 1..N with no gap.
    expect(result.history.map((e) => e.id)).toEqual(result.history.map((_, i) => i + 1));
  });

  it("the opening step spawns one batch and asks for the next with ContinueJoin", () => {
    const n = SPAWN_BATCH * 2 + 7;
    const stepper = new Stepper(
      wideMap(),
      Array.from({ length: n }, (_, i) => i),
    );
    stepper.deliver(stepper.rootId, { type: "Started", input: stepper.execution.input });
    stepper.deliver(stepper.rootId, { type: "Continue" });
    expect(spawnSizes(stepper)).toEqual([SPAWN_BATCH]);
    const continued = effectsOf(stepper.effects, "ContinueJoin");
    expect(continued).toHaveLength(1);
    const kept = effectsOf(stepper.effects, "KeepInputs");
    expect(kept[0]!.from).toBe(SPAWN_BATCH);
    expect(kept[0]!.inputs).toHaveLength(n - SPAWN_BATCH);

    const prefix = continued[0]!.prefix;
    stepper.deliver(stepper.rootId, { type: "ContinueJoin", prefix });
    stepper.deliver(stepper.rootId, { type: "ContinueJoin", prefix });
    expect(spawnSizes(stepper)).toEqual([SPAWN_BATCH, SPAWN_BATCH, 7]);
    // The last batch asks for none after it; a stray one changes nothing.
    expect(effectsOf(stepper.effects, "ContinueJoin")).toHaveLength(2);
    const before = stepper.effects.length;
    stepper.deliver(stepper.rootId, { type: "ContinueJoin", prefix });
    expect(stepper.effects.length).toBe(before);
    // A ContinueJoin of another join (an earlier attempt) is stale.
    stepper.deliver(stepper.rootId, { type: "ContinueJoin", prefix: `${prefix}x` });
    expect(stepper.effects.length).toBe(before);
  });

  it("a MaxConcurrency wider than a batch fills its window in batches and never exceeds it", async () => {
    const window = SPAWN_BATCH + 300;
    const n = SPAWN_BATCH * 3;
    const stepper = new Stepper(
      wideMap(window),
      Array.from({ length: n }, (_, i) => i),
    );
    stepper.deliver(stepper.rootId, { type: "Started", input: stepper.execution.input });
    stepper.deliver(stepper.rootId, { type: "Continue" });
    const prefix = effectsOf(stepper.effects, "ContinueJoin")[0]!.prefix;
    stepper.deliver(stepper.rootId, { type: "ContinueJoin", prefix });
    expect(spawnSizes(stepper)).toEqual([SPAWN_BATCH, 300]);
    // The window is full: no further batch is asked for.
    expect(effectsOf(stepper.effects, "ContinueJoin")).toHaveLength(1);

    const result = await execute(wideMap(window), {
      input: Array.from({ length: n }, (_, i) => i),
    });
    expect(result.status).toBe("SUCCEEDED");
    expect(result.output).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it("a Parallel of 2.5 batches of branches keeps branch order in its output", async () => {
    const n = Math.floor(SPAWN_BATCH * 2.5);
    const result = await execute(wideParallel(n));
    expect(result.status).toBe("SUCCEEDED");
    expect(result.output).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it("a Map that fails before its next batch stops what started and starts no later batch", () => {
    const n = SPAWN_BATCH * 2;
    const stepper = new Stepper(
      wideMap(),
      Array.from({ length: n }, (_, i) => i),
    );
    stepper.deliver(stepper.rootId, { type: "Started", input: stepper.execution.input });
    stepper.deliver(stepper.rootId, { type: "Continue" });
    const prefix = effectsOf(stepper.effects, "ContinueJoin")[0]!.prefix;
    stepper.deliver(stepper.rootId, {
      type: "ChildEnded",
      childRunId: `${prefix}/3`,
      index: 3,
      outcome: { status: "FAILED", error: "Item.Failed", cause: "item 3" },
    });
    const stops = effectsOf(stepper.effects, "StopChildren");
    expect(stops).toEqual([
      { type: "StopChildren", runId: stepper.rootId, prefix, started: SPAWN_BATCH },
    ]);
    expect(stepper.run().status).toBe("FAILED");
    stepper.deliver(stepper.rootId, { type: "ContinueJoin", prefix });
    expect(spawnSizes(stepper)).toEqual([SPAWN_BATCH]);
  });
});

describe("the Redis driver's ops for a wide join", () => {
  it("encodes a KeepInputs of 150,000 inputs (a Map of one-byte items) without overflowing the stack", () => {
    const inputs = Array.from({ length: 150_000 }, () => 0);
    const run = { runId: EXEC } as never;
    const ops = planOps(
      run,
      { type: "Continue", time: "", eventId: 1 },
      [{ type: "KeepInputs", runId: "x", prefix: `${EXEC}/1`, from: 1000, inputs }],
      { now: 0 },
    );
    expect(ops).toHaveLength(1);
    const [op] = ops;
    expect(op).toMatchObject({ op: "keepInputs", join: "m:e/1", from: 1000, keepSeconds: 0 });
    expect(op?.op === "keepInputs" && op.inputs.length).toBe(150_000);
    // And what crosses into Lua is one argument, whatever the op carries.
    expect(encodeArgs({ ops }).length).toBeGreaterThan(150_000);
  });
});
