import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { KEYS, REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * Forking from inside a running Map (issue 15: "Forking from inside a Map iteration
 * or Parallel branch forks the whole execution at that point"), on real Redis with a
 * real worker. Three iterations, each a Wait then an activity task: at the fork point
 * item 0 has ended, item 1 enters its task (the fork point, given a new input) and
 * item 2 still waits. The fork keeps item 0's output without running it, calls the
 * task of item 1 with the new input, and item 2's Wait ends at the source's instant.
 */
let stack: Stack;
const enc = encodeURIComponent;
const worker = { key: KEYS.callback };
const ACTIVITY = "arn:aws:states:us-east-1:123456789012:activity:fork-work";

const definition = {
  StartAt: "Each",
  States: {
    Each: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemProcessor: {
        StartAt: "Nap",
        States: {
          Nap: { Type: "Wait", SecondsPath: "$.wait", Next: "Work" },
          Work: {
            Type: "Task",
            Resource: ACTIVITY,
            Parameters: { "name.$": "$.name" },
            End: true,
          },
        },
      },
      Next: "Done",
    },
    Done: { Type: "Pass", End: true },
  },
};

/** A branch waiting on an activity task beside one that goes on. */
const pair = {
  StartAt: "Both",
  States: {
    Both: {
      Type: "Parallel",
      Branches: [
        {
          StartAt: "Ask",
          States: {
            Ask: {
              Type: "Task",
              Resource: ACTIVITY,
              Parameters: { "name.$": "$.name" },
              End: true,
            },
          },
        },
        {
          StartAt: "Nap",
          States: {
            Nap: { Type: "Wait", Seconds: 1, Next: "Say" },
            Say: { Type: "Pass", Parameters: { "said.$": "$.word" }, End: true },
          },
        },
      ],
      End: true,
    },
  },
};

beforeAll(async () => {
  stack = await startStack();
  await stack.client.post("/v1/state-machines", { name: "naps", definition });
  await stack.client.post("/v1/state-machines", { name: "pair", definition: pair });
});

afterAll(async () => {
  await stack?.close();
});

/** Every activity task taken, by the name it was given. */
const taken: string[] = [];

/** Takes the next activity task and answers it `{done: name}`; returns the name. */
async function work(): Promise<string> {
  const task = await stack.client.until(async () => {
    const r = await stack.client.get("/v1/activities/fork-work/task?wait=1", worker);
    return r.status === 200 ? r.body : undefined;
  }, 20_000);
  const input = typeof task.input === "string" ? JSON.parse(task.input) : task.input;
  const name = String(input.name);
  taken.push(name);
  await stack.client.post(
    `/v1/task-tokens/${enc(task.taskToken)}/success`,
    { output: { done: name } },
    worker,
  );
  return name;
}

async function history(id: string): Promise<any[]> {
  return (await stack.client.get(`/v1/executions/${enc(id)}/history?limit=1000`)).body.items;
}

async function ended(id: string): Promise<any> {
  return stack.client.until(async () => {
    const r = (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
    return r.status !== "RUNNING" ? r : undefined;
  }, 20_000);
}

function contextOf(id: string, startTime: string, input: Json) {
  const name = id.split(":").at(-1)!;
  return {
    executionId: id,
    name,
    startTime,
    input,
    stateMachineId: "naps",
    stateMachineName: "naps",
    seed: name,
  };
}

describe("fork from inside a Map", () => {
  it("forks the whole execution where an iteration entered a state, with a new input", async () => {
    const input = {
      items: [
        { name: "a", wait: 0 },
        { name: "b", wait: 1 },
        { name: "c", wait: 4 },
      ],
    };
    const started = Date.now();
    const source = (await stack.client.post("/v1/state-machines/naps/executions", { input })).body
      .executionId as string;
    expect(await work()).toBe("a");
    // Item 1 enters Work after its 1 s Wait: that is the fork point.
    const point = await stack.client.until(async () => {
      const events = await history(source);
      return events.find(
        (e) =>
          e.type === "TaskStateEntered" &&
          JSON.parse(e.stateEnteredEventDetails.input).name === "b",
      );
    });
    const before = await history(source);
    expect(before.some((e) => e.type === "MapIterationSucceeded")).toBe(true);

    const forkedAt = Date.now();
    const forked = await stack.client.post(
      `/v1/executions/${enc(source)}/fork`,
      { fromEventId: point.id, input: { name: "b2", wait: 1 } },
      { key: KEYS.run },
    );
    expect(forked.status).toBe(201);
    const fork = forked.body.executionId as string;
    // Item 1's task: the source's (b) and the fork's (b2), in either order.
    expect([await work(), await work()].sort()).toEqual(["b", "b2"]);
    // Item 2's Wait ends at the source's instant in both (4 s after the start).
    expect([await work(), await work()]).toEqual(["c", "c"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3900);

    const done = await ended(fork);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      forkedFrom: { executionId: source, eventId: point.id },
    });
    expect(done.output).toEqual([{ done: "a" }, { done: "b2" }, { done: "c" }]);
    expect((await ended(source)).output).toEqual([{ done: "a" }, { done: "b" }, { done: "c" }]);
    // Item 0's task ran once: the fork kept its output.
    expect(taken.filter((n) => n === "a")).toHaveLength(1);

    const events = await history(fork);
    expect(events[0]).toMatchObject({
      id: 1,
      type: "ExecutionForked",
      executionForkedEventDetails: { sourceExecutionArn: source, sourceEventId: point.id },
    });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const entered = events.filter((e) => e.type === "TaskStateEntered");
    expect(entered.map((e) => JSON.parse(e.stateEnteredEventDetails.input).name)).toEqual([
      "b2",
      "c",
    ]);
    expect(events.at(-1).type).toBe("ExecutionSucceeded");
    // Item 2's Wait, re-armed for the source's instant, not waited again from the fork.
    const napped = Date.parse(events.find((e) => e.type === "WaitStateExited").timestamp);
    expect(napped - started).toBeGreaterThanOrEqual(3900);
    expect(napped - forkedAt).toBeLessThan(3900);
    // The source's history up to the fork point is untouched.
    expect((await history(source)).slice(0, before.length)).toEqual(before);

    // Replay: the fork's journal writes the fork's history, and its first events
    // rebuild every run as the source's journal has them at the fork point.
    const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix: stack.prefix });
    try {
      const program = compileProgram(definition as never);
      const sourceEvents = await history(source);
      const sourceJournal = await runtime.journal(source);
      const forkJournal = await runtime.journal(fork);
      const rebuilt = replay(program, contextOf(fork, events[0].timestamp, input), forkJournal);
      const shape = (list: any[]) => list.map((e) => `${e.id}<${e.previousEventId}:${e.type}`);
      expect(shape(rebuilt.history)).toEqual(shape(events));

      let at: ReturnType<typeof replay> | undefined;
      for (let n = 1; n <= sourceJournal.length; n++) {
        at = replay(
          program,
          contextOf(source, sourceEvents[0].timestamp, input),
          sourceJournal.slice(0, n),
        );
        if (at.history.length >= point.id) break;
      }
      const restored = forkJournal.filter(
        (j) => j.event.type === "Restored" || j.event.type === "Forked",
      );
      const firsts = replay(program, contextOf(fork, events[0].timestamp, input), restored);
      const strip = (id: string) => id.slice(id.indexOf("/"));
      const srcRoot = at!.runs.get(source)!;
      const forkRoot = firsts.runs.get(fork)!;
      expect(forkRoot.variables).toEqual(srcRoot.variables);
      expect(forkRoot.random).toEqual(srcRoot.random);
      const join = (r: any) => ({
        ...r.current.phase.join,
        prefix: strip(r.current.phase.join.prefix),
      });
      expect(join(forkRoot)).toEqual(join(srcRoot));
      // Item 2 waits in both, on the same state with the same input.
      const item2 = (runs: Map<string, any>) => [...runs.values()].find((r) => r.iteration === 2);
      expect(item2(firsts.runs).current).toMatchObject({
        name: "Nap",
        input: item2(at!.runs).current.input,
        phase: { kind: "waiting" },
      });
    } finally {
      await runtime.close();
    }
  });

  it("from a Parallel branch, schedules again the task a sibling branch waited on", async () => {
    const input = { name: "pa", word: "hello" };
    const source = (await stack.client.post("/v1/state-machines/pair/executions", { input })).body
      .executionId as string;
    const point = await stack.client.until(async () =>
      (await history(source)).find(
        (e) => e.type === "PassStateEntered" && e.stateEnteredEventDetails.name === "Say",
      ),
    );
    const forked = await stack.client.post(`/v1/executions/${enc(source)}/fork`, {
      fromEventId: point.id,
      input: { name: "pa", word: "forked" },
    });
    expect(forked.status).toBe(201);
    const fork = forked.body.executionId as string;
    // Branch 0's activity task: the source's, and the fork's scheduled again.
    expect([await work(), await work()]).toEqual(["pa", "pa"]);
    expect((await ended(source)).output).toEqual([{ done: "pa" }, { said: "hello" }]);
    expect((await ended(fork)).output).toEqual([{ done: "pa" }, { said: "forked" }]);
    const events = await history(fork);
    expect(events[0].type).toBe("ExecutionForked");
    expect(events.filter((e) => e.type === "ActivityScheduled")).toHaveLength(1);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  });
});
