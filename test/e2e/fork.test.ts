import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { KEYS, REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * Forking on real Redis: the fork takes up the source where it entered a state
 * (rebuilt by replaying the source's journal), with a fixed input, and diverges; the
 * source is untouched; what cannot be forked from is refused naming what can.
 */
let stack: Stack;
const enc = encodeURIComponent;

// An agent-like loop: a counter and a running total in variables, one Pass per round.
const loop = {
  QueryLanguage: "JSONata",
  StartAt: "Init",
  States: {
    Init: { Type: "Pass", Assign: { n: 0, total: 0 }, Next: "Round" },
    Round: {
      Type: "Pass",
      Assign: { n: "{% $n + 1 %}", total: "{% $total + $states.input.step %}" },
      Output: "{% $states.input %}",
      Next: "More?",
    },
    "More?": {
      Type: "Choice",
      Choices: [{ Condition: "{% $n < 5 %}", Next: "Round" }],
      Default: "Done",
    },
    Done: { Type: "Pass", Output: "{% {'n': $n, 'total': $total, 'uuid': $uuid()} %}", End: true },
  },
};

const fanOut = {
  StartAt: "Each",
  States: {
    Each: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemProcessor: { StartAt: "One", States: { One: { Type: "Pass", End: true } } },
      Next: "After",
    },
    After: { Type: "Pass", End: true },
  },
};

beforeAll(async () => {
  stack = await startStack();
  await stack.client.post("/v1/state-machines", { name: "loop", definition: loop });
  await stack.client.post("/v1/state-machines", { name: "fan", definition: fanOut });
});

afterAll(async () => {
  await stack?.close();
});

async function history(id: string): Promise<any[]> {
  return (await stack.client.get(`/v1/executions/${enc(id)}/history?limit=1000`)).body.items;
}

async function ended(id: string): Promise<any> {
  return stack.client.until(async () => {
    const r = (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
    return r.status !== "RUNNING" ? r : undefined;
  });
}

describe("fork", () => {
  it("takes up a loop at its third round with a fixed input, then diverges", async () => {
    const source = (
      await stack.client.post("/v1/state-machines/loop/executions?wait=10", {
        input: { step: 1 },
      })
    ).body;
    expect(source.output).toMatchObject({ n: 5, total: 5 });
    const events = await history(source.executionId);
    const rounds = events.filter(
      (e) => e.type === "PassStateEntered" && e.stateEnteredEventDetails.name === "Round",
    );
    const third = rounds[2]!.id as number;

    const forked = await stack.client.post(
      `/v1/executions/${enc(source.executionId)}/fork`,
      { fromEventId: third, input: { step: 10 }, name: "fixed" },
      { key: KEYS.run },
    );
    expect(forked.status).toBe(201);
    expect(forked.body.forkedFrom).toEqual({ executionId: source.executionId, eventId: third });
    const fork = await ended(forked.body.executionId);
    // Rounds 1–2 counted 1 each (the source's variables), rounds 3–5 count 10 each.
    expect(fork).toMatchObject({
      status: "SUCCEEDED",
      version: 1,
      forkedFrom: { executionId: source.executionId, eventId: third },
    });
    expect(fork.output).toMatchObject({ n: 5, total: 32 });

    const forkEvents = await history(forked.body.executionId);
    expect(forkEvents[0]).toMatchObject({
      id: 1,
      type: "ExecutionForked",
      executionForkedEventDetails: {
        sourceExecutionArn: source.executionId,
        sourceEventId: third,
        callerName: "runner",
      },
    });
    expect(forkEvents[1]).toMatchObject({
      type: "PassStateEntered",
      stateEnteredEventDetails: { name: "Round", input: '{"step":10}' },
    });
    // From there the fork's history has the shape of the source's from that event on.
    const shape = (list: any[]) =>
      list.map((e) => `${e.type}:${e.stateEnteredEventDetails?.name ?? ""}`);
    expect(shape(forkEvents.slice(1))).toEqual(shape(events.slice(third - 1)));
    // The source is untouched.
    expect(await history(source.executionId)).toEqual(events);
  });

  it("rebuilds exactly the source's state at the fork point (replay)", async () => {
    const source = (
      await stack.client.post("/v1/state-machines/loop/executions?wait=10", {
        input: { step: 2 },
      })
    ).body;
    const events = await history(source.executionId);
    const second = events.filter(
      (e) => e.type === "PassStateEntered" && e.stateEnteredEventDetails.name === "Round",
    )[1]!.id as number;
    const forked = await stack.client.post(`/v1/executions/${enc(source.executionId)}/fork`, {
      fromEventId: second,
    });
    await ended(forked.body.executionId);

    // The source's journal replayed to the fork point, and the fork's first step.
    const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix: stack.prefix });
    try {
      const program = compileProgram(loop as never);
      const journalOf = (id: string) => runtime.journal(id);
      const sourceJournal = await journalOf(source.executionId);
      const context = (id: string, e: any) => ({
        executionId: id,
        name: id.split(":").at(-1)!,
        startTime: e.timestamp,
        input: { step: 2 },
        stateMachineId: "loop",
        stateMachineName: "loop",
        seed: id.split(":").at(-1)!,
      });
      const src = context(source.executionId, events[0]);
      let rebuilt: ReturnType<typeof replay> | undefined;
      for (let n = 1; n <= sourceJournal.length; n++) {
        rebuilt = replay(program, src, sourceJournal.slice(0, n));
        if (rebuilt.history.length >= second) break;
      }
      const forkJournal = await journalOf(forked.body.executionId);
      const forkEvents = await history(forked.body.executionId);
      const fk = replay(
        program,
        context(forked.body.executionId, forkEvents[0]),
        forkJournal.slice(0, 1),
      );
      const at = rebuilt!.runs.get(source.executionId)!;
      const start = fk.runs.get(forked.body.executionId)!;
      expect(start.variables).toEqual(at.variables);
      expect(start.seed).toEqual(at.seed);
      expect(start.random).toEqual(at.random);
      expect(start.current!.name).toBe(at.current!.name);
      expect(start.current!.input).toEqual(at.current!.input);
    } finally {
      await runtime.close();
    }
  });

  it("refuses what is not a state entered, naming the nearest that is, and other bad requests", async () => {
    const source = (
      await stack.client.post("/v1/state-machines/fan/executions?wait=10", {
        input: { items: [1, 2] },
      })
    ).body;
    const events = await history(source.executionId);
    const exited = events.find((e) => e.type === "MapStateExited")!.id as number;
    const refused = await stack.client.post(`/v1/executions/${enc(source.executionId)}/fork`, {
      fromEventId: exited,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("InvalidForkPoint");
    const lastEntered = events
      .slice(0, exited - 1)
      .filter((e) => e.type.endsWith("StateEntered"))
      .at(-1)!.id as number;
    expect(refused.body.message).toContain(`the nearest event before it that is: ${lastEntered}`);
    const mapEntered = events.find((e) => e.type === "MapStateEntered")!.id as number;
    const ok = await stack.client.post(`/v1/executions/${enc(source.executionId)}/fork`, {
      fromEventId: mapEntered,
      input: { items: [7, 8, 9] },
    });
    expect(ok.status).toBe(201);
    // The Map runs again over the fixed items (its output: the iterations' outputs).
    expect((await ended(ok.body.executionId)).output).toEqual([7, 8, 9]);

    const beyond = await stack.client.post(`/v1/executions/${enc(source.executionId)}/fork`, {
      fromEventId: 9999,
    });
    expect(beyond.status).toBe(400);
    expect(beyond.body.message).toContain("no history event 9999");
    const missing = await stack.client.post(`/v1/executions/${enc(source.executionId)}/fork`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("fromEventId");
  });
});
