import { DescribeMapRunCommand, ListMapRunsCommand, type SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { sfn } from "../aws/helpers.js";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * Redrive of an execution that failed inside a Map or a Parallel, on real Redis with
 * a real worker (AWS's RedriveExecution: "For workflows that include an Inline Map or
 * Parallel state, RedriveExecution API action reschedules and redrives only the
 * iterations and branches that failed or aborted"). A local HTTP service fails one
 * item the first time it sees it; the redrive calls it for that item only, and the
 * state's output lists every item's result in order.
 */
let stack: Stack;
let service: FakeServer;
let aws: SFNClient;
const enc = encodeURIComponent;
/** Items that fail their first call (after the others have answered). */
const failOnce = new Set<string>();
/** Items whose next call answers late (a redriven Map Run is seen running meanwhile). */
const slowOnce = new Set<string>();

beforeAll(async () => {
  service = await startFakeServer((request) => {
    const item = String((request.body as { item?: unknown } | undefined)?.item);
    if (failOnce.delete(item)) {
      // Late, so that its siblings have succeeded when it fails the state.
      return { status: 500, body: { message: `no ${item} today` }, delayMs: 600 };
    }
    if (slowOnce.delete(item)) return { body: { done: item }, delayMs: 1500 };
    return { body: { done: item } };
  });
  stack = await startStack({ egressAllow: "127.0.0.1" });
  aws = sfn(stack);
  await stack.client.post("/v1/state-machines", { name: "each", definition: mapMachine(service) });
  await stack.client.post("/v1/state-machines", {
    name: "one-by-one",
    definition: mapMachine(service, 1),
  });
  await stack.client.post("/v1/state-machines", {
    name: "distributed",
    definition: mapMachine(service, 0, true),
  });
  await stack.client.post("/v1/state-machines", {
    name: "distributed-one-by-one",
    definition: mapMachine(service, 1, true),
  });
  await stack.client.post("/v1/state-machines", {
    name: "nested",
    definition: nestedMachine(service),
  });
  await stack.client.post("/v1/state-machines", {
    name: "branches",
    definition: parallelMachine(service),
  });
});

afterAll(async () => {
  aws?.destroy();
  await stack?.close();
  await service?.close();
});

const work = (service: FakeServer, item: string) => ({
  Type: "Task",
  Resource: "arn:aws:states:::http:invoke",
  Parameters: {
    ApiEndpoint: `${service.url}/work`,
    Method: "POST",
    RequestBody: { "item.$": item },
  },
  OutputPath: "$.ResponseBody",
  End: true,
});

function mapMachine(service: FakeServer, maxConcurrency = 0, distributed = false): object {
  return {
    StartAt: "Prepare",
    States: {
      Prepare: { Type: "Pass", Next: "Each" },
      Each: {
        Type: "Map",
        ItemsPath: "$.items",
        MaxConcurrency: maxConcurrency,
        // Each item is prepared, then worked: a redrive takes up the failed item at Work.
        ItemProcessor: {
          ...(distributed
            ? { ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" } }
            : {}),
          StartAt: "Prep",
          States: {
            Prep: {
              ...work(service, "States.Format('prep-{}', $)"),
              ResultPath: null,
              OutputPath: "$",
              End: false,
              Next: "Work",
            },
            Work: work(service, "$"),
          },
        },
        ResultPath: "$.results",
        Next: "Done",
      },
      Done: { Type: "Pass", OutputPath: "$.results", End: true },
    },
  };
}

/** A Parallel whose second branch is a Map: the redrive goes down to the failed item. */
function nestedMachine(service: FakeServer): object {
  return {
    StartAt: "Both",
    States: {
      Both: {
        Type: "Parallel",
        Branches: [
          { StartAt: "Solo", States: { Solo: work(service, "$.solo") } },
          {
            StartAt: "Pre",
            States: {
              Pre: {
                ...work(service, "$.pre"),
                ResultPath: null,
                OutputPath: "$",
                End: false,
                Next: "Inner",
              },
              Inner: {
                Type: "Map",
                ItemsPath: "$.items",
                ItemProcessor: { StartAt: "Work", States: { Work: work(service, "$") } },
                End: true,
              },
            },
          },
        ],
        End: true,
      },
    },
  };
}

function parallelMachine(service: FakeServer): object {
  const branch = (name: string) => ({ StartAt: name, States: { [name]: work(service, "$.who") } });
  return {
    StartAt: "All",
    States: {
      All: {
        Type: "Parallel",
        Parameters: { "who.$": "$.who", "other.$": "$.other" },
        Branches: [
          branch("A"),
          { StartAt: "B", States: { B: work(service, "$.other") } },
          branch("C"),
        ],
        End: true,
      },
    },
  };
}

const callsFor = (item: string) =>
  service.requests.filter((r) => (r.body as { item?: unknown } | undefined)?.item === item).length;

async function record(id: string): Promise<any> {
  return (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
}

async function until(id: string, status: string): Promise<any> {
  return stack.client.until(async () => {
    const r = await record(id);
    return r.status === status ? r : undefined;
  }, 20_000);
}

async function history(id: string): Promise<any[]> {
  return (await stack.client.get(`/v1/executions/${enc(id)}/history?limit=1000`)).body.items;
}

/** The journal replayed through the pure step writes the history Redis holds. */
async function expectReplays(id: string, definition: object, input: Json): Promise<void> {
  const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix: stack.prefix });
  try {
    const events = await history(id);
    const name = id.split(":").at(-1)!;
    const rebuilt = replay(
      compileProgram(definition as never),
      {
        executionId: id,
        name,
        startTime: events[0].timestamp,
        input,
        stateMachineId: "m",
        stateMachineName: "m",
        seed: name,
      },
      await runtime.journal(id),
    );
    const shape = (list: any[]) => list.map((e) => `${e.id}<${e.previousEventId}:${e.type}`);
    expect(shape(rebuilt.history)).toEqual(shape(events));
  } finally {
    await runtime.close();
  }
}

describe("redrive inside a Map or Parallel", () => {
  it("a Distributed Map: the failed item's child execution goes on in its own history", async () => {
    failOnce.add("d2");
    const items = ["d1", "d2", "d3"];
    const id = (
      await stack.client.post("/v1/state-machines/distributed/executions", { input: { items } })
    ).body.executionId as string;
    await until(id, "FAILED");
    const mapRun = (await history(id)).find((e) => e.type === "MapRunStarted")
      .mapRunStartedEventDetails.mapRunArn as string;
    const listed = await stack.client.get(`/v1/executions?mapRun=${enc(mapRun)}`);
    const failedChild = (listed.body.items as { executionId: string; status: string }[]).find(
      (c) => c.status === "FAILED",
    )!;
    expect(failedChild.executionId).toMatch(/-1$/);
    const before = await aws.send(new DescribeMapRunCommand({ mapRunArn: mapRun }));
    expect(before.status).toBe("FAILED");
    expect(before.stopDate).toBeInstanceOf(Date);
    expect(before.redriveCount).toBe(0);
    const failedEvents = (await history(id)).length;

    slowOnce.add("d2");
    const redriven = await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {});
    expect(redriven.status).toBe(200);
    // While its item runs again, the Map Run runs again: no stop date, counted redriven.
    const running = await stack.client.until(async () => {
      const r = await aws.send(new DescribeMapRunCommand({ mapRunArn: mapRun }));
      return r.status === "RUNNING" ? r : undefined;
    }, 20_000);
    expect(running.stopDate).toBeUndefined();
    expect(running.redriveCount).toBe(1);
    expect(running.itemCounts).toMatchObject({ total: 3, succeeded: 2, running: 1, failed: 0 });
    expect((await record(id)).status).toBe("RUNNING");
    const done = await until(id, "SUCCEEDED");
    expect(done.output).toEqual(items.map((item) => ({ done: item })));
    expect(items.map(callsFor)).toEqual([1, 2, 1]);

    const events = await history(id);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => String(e.type).startsWith("MapIteration"))).toEqual([]);
    // As AWS: the parent's redrive redrives its Map Run (the same ARN, counted), which
    // then ends as any Map Run does.
    const after = events.slice(failedEvents).map((e) => e.type);
    expect(after.filter((t) => String(t).startsWith("MapRun"))).toEqual([
      "MapRunRedriven",
      "MapRunSucceeded",
    ]);
    expect(after.indexOf("MapRunRedriven")).toBe(after.indexOf("MapStateStarted") + 1);
    const mapRunRedriven = events.find((e) => e.type === "MapRunRedriven");
    expect(mapRunRedriven.mapRunRedrivenEventDetails).toEqual({
      mapRunArn: mapRun,
      redriveCount: 1,
    });
    expect(events.filter((e) => e.type === "MapRunStarted")).toHaveLength(1);
    const described = await aws.send(new DescribeMapRunCommand({ mapRunArn: mapRun }));
    expect(described.status).toBe("SUCCEEDED");
    expect(described.redriveCount).toBe(1);
    expect(described.redriveDate).toBeInstanceOf(Date);
    expect(described.redriveDate!.getTime()).toBeGreaterThanOrEqual(before.stopDate!.getTime());
    expect(described.stopDate!.getTime()).toBeGreaterThanOrEqual(described.redriveDate!.getTime());
    for (const counts of [described.itemCounts!, described.executionCounts!]) {
      expect(counts).toMatchObject({
        total: 3,
        succeeded: 3,
        failed: 0,
        aborted: 0,
        running: 0,
        pending: 0,
      });
    }
    const listedRuns = await aws.send(new ListMapRunsCommand({ executionArn: id }));
    expect(listedRuns.mapRuns!.map((r) => r.mapRunArn)).toEqual([mapRun]);
    expect(listedRuns.mapRuns![0]!.stopDate).toBeInstanceOf(Date);
    const child = await until(failedChild.executionId, "SUCCEEDED");
    expect(child.output).toEqual({ done: "d2" });
    expect(child.error).toBeUndefined();
    const ownEvents = await history(failedChild.executionId);
    const own = ownEvents.map((e) => e.type);
    expect(own.indexOf("ExecutionFailed")).toBeGreaterThan(0);
    // As AWS: the redriven child's own history says so, with its own redrive count.
    expect(own.slice(own.indexOf("ExecutionFailed") + 1)).toEqual([
      "ExecutionRedriven",
      "TaskStateEntered",
      "TaskScheduled",
      "TaskStarted",
      "TaskSucceeded",
      "TaskStateExited",
      "ExecutionSucceeded",
    ]);
    const redrivenEvent = ownEvents[own.indexOf("ExecutionRedriven")];
    expect(redrivenEvent.executionRedrivenEventDetails).toEqual({ redriveCount: 1 });
    expect(redrivenEvent.previousEventId).toBe(ownEvents[own.indexOf("ExecutionFailed")].id);
    expect(ownEvents.map((e) => e.id)).toEqual(ownEvents.map((_, i) => i + 1));
    expect(child.redriveCount).toBe(1);

    // The items that succeeded were not redriven: their histories have no such event.
    const others = (listed.body.items as { executionId: string }[]).filter(
      (c) => c.executionId !== failedChild.executionId,
    );
    for (const other of others) {
      expect((await history(other.executionId)).map((e) => e.type)).not.toContain(
        "ExecutionRedriven",
      );
    }
  });

  it("a Distributed Map's items never started run as child executions of the Map Run", async () => {
    // One at a time: y3 fails the Map Run while y4 and y5 wait for the window. AWS's
    // redrive reruns the unsuccessful children, those not started included, as child
    // executions of the Map Run (never as iterations of the parent).
    failOnce.add("y3");
    const items = ["y1", "y2", "y3", "y4", "y5"];
    const id = (
      await stack.client.post("/v1/state-machines/distributed-one-by-one/executions", {
        input: { items },
      })
    ).body.executionId as string;
    await until(id, "FAILED");
    expect(items.map(callsFor)).toEqual([1, 1, 1, 0, 0]);
    const mapRun = (await history(id)).find((e) => e.type === "MapRunStarted")
      .mapRunStartedEventDetails.mapRunArn as string;
    const listedBefore = await stack.client.get(`/v1/executions?mapRun=${enc(mapRun)}`);
    expect(listedBefore.body.items).toHaveLength(3);

    await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {});
    const done = await until(id, "SUCCEEDED");
    expect(done.output).toEqual(items.map((item) => ({ done: item })));
    expect(items.map(callsFor)).toEqual([1, 1, 2, 1, 1]);
    const events = await history(id);
    expect(events.filter((e) => String(e.type).startsWith("MapIteration"))).toEqual([]);
    expect(events.filter((e) => String(e.type).startsWith("Task"))).toEqual([]);

    const listed = (await stack.client.get(`/v1/executions?mapRun=${enc(mapRun)}`)).body.items as {
      executionId: string;
      status: string;
      redriveCount?: number;
    }[];
    const byIndex = new Map(listed.map((c) => [Number(c.executionId.split("-").at(-1)), c]));
    expect([...byIndex.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
    expect([...byIndex.values()].every((c) => c.status === "SUCCEEDED")).toBe(true);
    // The failed child was redriven; the ones never started started for the first time.
    expect([0, 1, 2, 3, 4].map((i) => byIndex.get(i)!.redriveCount ?? 0)).toEqual([0, 0, 1, 0, 0]);
    for (const i of [3, 4]) {
      const own = (await history(byIndex.get(i)!.executionId)).map((e) => e.type);
      expect(own[0]).toBe("ExecutionStarted");
      expect(own).not.toContain("ExecutionRedriven");
      expect(own.at(-1)).toBe("ExecutionSucceeded");
    }
  });

  it("runs again only the Map's failed item; the output lists all five in order", async () => {
    failOnce.add("m3");
    const items = ["m1", "m2", "m3", "m4", "m5"];
    const id = (await stack.client.post("/v1/state-machines/each/executions", { input: { items } }))
      .body.executionId as string;
    const failed = await until(id, "FAILED");
    expect(failed.error).toBe("States.Http.StatusCode.500");
    expect(items.map(callsFor)).toEqual([1, 1, 1, 1, 1]);

    const redriven = await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {});
    expect(redriven.status).toBe(200);
    const done = await until(id, "SUCCEEDED");
    expect(done.output).toEqual(items.map((item) => ({ done: item })));
    // Only the failed item was called again, from the state it failed in: its Prep ran once.
    expect(items.map(callsFor)).toEqual([1, 1, 2, 1, 1]);
    expect(items.map((i) => callsFor(`prep-${i}`))).toEqual([1, 1, 1, 1, 1]);

    const events = await history(id);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const after = events.slice(events.findIndex((e) => e.type === "ExecutionRedriven"));
    expect(after.map((e) => e.type)).toEqual([
      "ExecutionRedriven",
      "MapStateEntered",
      "MapStateStarted",
      "MapIterationStarted",
      "TaskStateEntered",
      "TaskScheduled",
      "TaskStarted",
      "TaskSucceeded",
      "TaskStateExited",
      "MapIterationSucceeded",
      "MapStateSucceeded",
      "MapStateExited",
      "PassStateEntered",
      "PassStateExited",
      "ExecutionSucceeded",
    ]);
    expect(
      after.find((e) => e.type === "MapIterationStarted").mapIterationStartedEventDetails,
    ).toMatchObject({ index: 2 });
    // Prepare ran once.
    expect(events.filter((e) => e.type === "PassStateEntered")).toHaveLength(2);
    await expectReplays(id, mapMachine(service), { items });
  });

  it("with MaxConcurrency 1, runs the failed item and the ones never started", async () => {
    failOnce.add("w3");
    const items = ["w1", "w2", "w3", "w4", "w5"];
    const id = (
      await stack.client.post("/v1/state-machines/one-by-one/executions", { input: { items } })
    ).body.executionId as string;
    await until(id, "FAILED");
    expect(items.map(callsFor)).toEqual([1, 1, 1, 0, 0]);
    await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {});
    const done = await until(id, "SUCCEEDED");
    expect(done.output).toEqual(items.map((item) => ({ done: item })));
    expect(items.map(callsFor)).toEqual([1, 1, 2, 1, 1]);
    // Still one at a time.
    const events = await history(id);
    const after = events.slice(events.findIndex((e) => e.type === "ExecutionRedriven"));
    const started = after.filter((e) => e.type === "MapIterationStarted");
    expect(started.map((e) => e.mapIterationStartedEventDetails.index)).toEqual([2, 3, 4]);
    await expectReplays(id, mapMachine(service, 1), { items });
  });

  it("goes down a Parallel into its Map: only the failed item runs again", async () => {
    failOnce.add("n2");
    const input = { solo: "n-solo", pre: "n-pre", items: ["n1", "n2", "n3"] };
    const id = (await stack.client.post("/v1/state-machines/nested/executions", { input })).body
      .executionId as string;
    await until(id, "FAILED");
    await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {});
    const done = await until(id, "SUCCEEDED");
    expect(done.output).toEqual([
      { done: "n-solo" },
      [{ done: "n1" }, { done: "n2" }, { done: "n3" }],
    ]);
    expect(["n-solo", "n-pre", "n1", "n2", "n3"].map(callsFor)).toEqual([1, 1, 1, 2, 1]);
    await expectReplays(id, nestedMachine(service), input);
  });

  it("runs again only the Parallel's failed branch", async () => {
    failOnce.add("p-b");
    const id = (
      await stack.client.post("/v1/state-machines/branches/executions", {
        input: { who: "p-ac", other: "p-b" },
      })
    ).body.executionId as string;
    await until(id, "FAILED");
    expect([callsFor("p-ac"), callsFor("p-b")]).toEqual([2, 1]);
    await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {});
    const done = await until(id, "SUCCEEDED");
    expect(done.output).toEqual([{ done: "p-ac" }, { done: "p-b" }, { done: "p-ac" }]);
    expect([callsFor("p-ac"), callsFor("p-b")]).toEqual([2, 2]);
    await expectReplays(id, parallelMachine(service), { who: "p-ac", other: "p-b" });
  });
});
