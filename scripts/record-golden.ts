/**
 * Records the golden replay files under test/golden/: journals with the histories
 * this version of the engine wrote for them, replayed on every test run
 * (test/golden/replay.test.ts), as Temporal's SDK replays stored histories. A
 * change that replays an old journal differently then fails that test, and must be
 * made deliberately: re-record (`npx tsx scripts/record-golden.ts`) only when the
 * new history is the intended one, and say so in the commit.
 *
 * Two sources:
 * - the in-memory driver on a spread of the AWS-recorded conformance cases (Map,
 *   Parallel, Retry/Catch, Wait, JSONata, variables, intrinsics, the context object,
 *   task mocks), with a fixed clock, seed and nonces;
 * - the durable Redis driver (a private key prefix, one in-process worker) on
 *   executions whose journals only it writes: concurrent Map iterations, task
 *   tokens answered, a pause and resume, a fork, a redrive.
 *
 * `npx tsx scripts/record-golden.ts NAME…` records only the named Redis executions
 * (`map-redriven`…) and leaves every other file as it is: a new golden need not
 * re-record the old ones, whose journals are what running executions hold.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import type { StateMachineDefinition } from "../engine/core/definition.js";
import type { Json } from "../engine/core/json.js";
import { runExecution, type MockResponse } from "../engine/drivers/memory.js";
import { createRedisRuntime } from "../runtime/runtime.js";
import { startWorker } from "../runtime/worker/worker.js";
import { functionRunner } from "../task-runners/function.js";
import { TaskError } from "../task-runners/runner.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const OUT = join(ROOT, "test/golden");
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

interface Case {
  id: string;
  definition: StateMachineDefinition;
  input?: Json;
  mocks?: Record<string, MockResponse[]>;
  features?: string[];
  expect?: { status?: string };
}

function cases(file: string): Case[] {
  return readFileSync(join(ROOT, "test/conformance/data", file), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Case);
}

function slug(text: string): string {
  return text
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 90);
}

function write(name: string, golden: object): void {
  writeFileSync(join(OUT, `${name}.json`), JSON.stringify(golden) + "\n");
}

/** A few cases per feature, the first ones in file order (stable across re-records). */
async function recordMemory(): Promise<number> {
  const perFeature: Record<string, number> = {
    Map: 4,
    Parallel: 3,
    Retry: 2,
    Catch: 2,
    Wait: 2,
    JSONata: 3,
    Variables: 3,
    Intrinsics: 2,
    ContextObject: 2,
    Choice: 1,
    TaskMock: 4,
  };
  const taken = new Set<string>();
  let n = 0;
  for (const tc of [...cases("cases.jsonl"), ...cases("task-cases.jsonl")]) {
    const feature = (tc.features ?? []).find((f) => (perFeature[f] ?? 0) > 0 && !taken.has(tc.id));
    if (!feature) continue;
    perFeature[feature]!--;
    taken.add(tc.id);
    const result = await runExecution(tc.definition, {
      input: tc.input ?? {},
      ...(tc.mocks ? { mocks: tc.mocks } : {}),
      startTime: "2024-01-01T00:00:00.000Z",
      seed: tc.id,
      nonce: (() => {
        let i = 0;
        return () => `nonce-${i++}`;
      })(),
    });
    write(`memory-${String(n).padStart(2, "0")}-${slug(tc.id)}`, {
      id: tc.id,
      driver: "memory",
      features: tc.features ?? [],
      definition: tc.definition,
      context: result.execution,
      journal: result.journal,
      history: result.history,
      status: result.status,
    });
    n++;
  }
  return n;
}

/** Only these Redis executions (none: all of them, and the in-memory ones). */
const ONLY = new Set(process.argv.slice(2));

async function recordRedis(): Promise<number> {
  const prefix = `stepwise-golden-${randomBytes(4).toString("hex")}`;
  const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
  const worker = await startWorker({
    redisUrl: REDIS_URL,
    prefix,
    onError: () => undefined,
    taskRunners: [
      functionRunner({
        double: async (input: Json) => ({ n: Number((input as { n: number }).n) * 2 }),
        // Fails item 3 once (late: its siblings succeed first), for the Map redrive.
        flaky: async (input: Json) => {
          const n = Number((input as { n: number }).n);
          if (n === 3 && !flakyFailed) {
            flakyFailed = true;
            await new Promise((r) => setTimeout(r, 300));
            throw new TaskError("Flaky.Failed", "item 3 failed once");
          }
          return { n: n * 2 };
        },
      }),
    ],
  });
  const n = { count: 0 };
  let flakyFailed = false;
  const until = async <T>(check: () => Promise<T | undefined>): Promise<T> => {
    for (let i = 0; i < 400; i++) {
      const v = await check();
      if (v !== undefined) return v;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error("golden: condition not met");
  };
  const ended = (id: string) =>
    until(async () => {
      const r = await runtime.describeExecution(id);
      return r.status !== "RUNNING" && r.status !== "PAUSED" ? r : undefined;
    });
  const save = async (name: string, id: string, features: string[]) => {
    if (ONLY.size > 0 && !ONLY.has(name)) return;
    const { context, definition } = await runtime.executionContext(id);
    const history = [];
    for (let cursor: string | undefined; ;) {
      const page = await runtime.getHistory(id, { limit: 1000, ...(cursor ? { cursor } : {}) });
      history.push(...page.items);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    const record = await runtime.describeExecution(id);
    write(`redis-${name}`, {
      id: name,
      driver: "redis",
      features,
      definition,
      context,
      journal: await runtime.journal(id),
      history,
      status: record.status,
    });
    n.count++;
  };
  const machine = async (name: string, definition: object) =>
    runtime.createStateMachine(name, definition as StateMachineDefinition);
  try {
    await machine("fan", {
      StartAt: "Each",
      States: {
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          MaxConcurrency: 5,
          ItemProcessor: {
            StartAt: "Double",
            States: {
              Double: {
                Type: "Task",
                Resource: "function:double",
                Parameters: { "n.$": "$" },
                ResultSelector: { "n.$": "$.n" },
                End: true,
              },
            },
          },
          End: true,
        },
      },
    });
    const fan = await runtime.startExecution("fan", { input: { items: [1, 2, 3, 4, 5, 6, 7, 8] } });
    await ended(fan.executionId);
    await save("map-concurrent-tasks", fan.executionId, ["Map", "Task"]);

    await machine("ask", {
      StartAt: "Both",
      States: {
        Both: {
          Type: "Parallel",
          Branches: ["A", "B"].map((b) => ({
            StartAt: b,
            States: {
              [b]: {
                Type: "Task",
                Resource: "arn:aws:states:::stepwise:waitForTaskToken",
                Parameters: { "token.$": "$$.Task.Token" },
                End: true,
              },
            },
          })),
          Next: "Nap",
        },
        Nap: { Type: "Wait", Seconds: 1, Next: "Done" },
        Done: { Type: "Pass", End: true },
      },
    });
    const ask = await runtime.startExecution("ask", { input: {} });
    const tokens = await until(async () => {
      const pending = await runtime.pendingTasks(ask.executionId);
      return pending.length === 2 ? pending.map((p) => p.taskToken!) : undefined;
    });
    await runtime.sendTaskSuccess(tokens[0]!, { a: 1 });
    await runtime.sendTaskFailure(tokens[1]!, "Nope", "the B branch said no");
    await ended(ask.executionId);
    await save("parallel-callbacks-failed", ask.executionId, ["Parallel", "Callback"]);
    const redriven = await runtime.redriveExecution(ask.executionId);
    // Only the branch that failed runs again (the golden file was recorded when
    // both did: its journal is what a redrive of that time left).
    const again = await until(async () => {
      const pending = await runtime.pendingTasks(redriven.executionId);
      return pending.length === 1 ? pending.map((p) => p.taskToken!) : undefined;
    });
    const paused = await until(async () => {
      await runtime.sendTaskSuccess(again[0]!, { b: 2 }).catch(() => undefined);
      const h = await runtime.getHistory(ask.executionId, { reverse: true, limit: 1 });
      return h.items[0]?.type === "WaitStateEntered" ? true : undefined;
    });
    if (paused) await runtime.pauseExecution(ask.executionId, { reason: "golden" });
    await new Promise((r) => setTimeout(r, 1_200));
    await runtime.resumeExecution(ask.executionId);
    await ended(ask.executionId);
    await save("parallel-redriven-paused", ask.executionId, [
      "Parallel",
      "Redrive",
      "Pause",
      "Wait",
    ]);

    await machine("loop", {
      QueryLanguage: "JSONata",
      StartAt: "Init",
      States: {
        Init: { Type: "Pass", Assign: { n: 0 }, Next: "Round" },
        Round: {
          Type: "Pass",
          Assign: { n: "{% $n + 1 %}" },
          Output: "{% $merge([$states.input, {'n': $n + 1, 'id': $uuid()}]) %}",
          Next: "More?",
        },
        "More?": {
          Type: "Choice",
          Choices: [{ Condition: "{% $n < 4 %}", Next: "Round" }],
          Default: "Done",
        },
        Done: { Type: "Succeed" },
      },
    });
    const loop = await runtime.startExecution("loop", { input: { step: 1 } });
    await ended(loop.executionId);
    await save("jsonata-loop", loop.executionId, ["JSONata", "Variables", "Choice"]);
    const history = await runtime.getHistory(loop.executionId, { limit: 1000 });
    const second = history.items.filter(
      (e) => e.type === "PassStateEntered" && e.stateEnteredEventDetails?.name === "Round",
    )[1]!.id;
    const fork = await runtime.forkExecution(loop.executionId, {
      fromEventId: second,
      input: { step: 10 },
    });
    await ended(fork.executionId);
    await save("jsonata-loop-forked", fork.executionId, ["JSONata", "Variables", "Fork"]);

    // A Map redriven: only its failed item runs again (AWS's inline Map redrive).
    await machine("flaky-map", {
      StartAt: "Each",
      States: {
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemSelector: { "n.$": "$$.Map.Item.Value" },
          ItemProcessor: {
            StartAt: "Flaky",
            States: { Flaky: { Type: "Task", Resource: "function:flaky", End: true } },
          },
          End: true,
        },
      },
    });
    const flaky = await runtime.startExecution("flaky-map", { input: { items: [1, 2, 3, 4, 5] } });
    await ended(flaky.executionId);
    await runtime.redriveExecution(flaky.executionId);
    await ended(flaky.executionId);
    await save("map-redriven", flaky.executionId, ["Map", "Task", "Redrive"]);

    // A fork from inside a Map iteration: the whole execution, every iteration as it was.
    await machine("naps", {
      StartAt: "Each",
      States: {
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            StartAt: "Nap",
            States: {
              Nap: { Type: "Wait", SecondsPath: "$.wait", Next: "Double" },
              Double: { Type: "Task", Resource: "function:double", End: true },
            },
          },
          End: true,
        },
      },
    });
    const naps = await runtime.startExecution("naps", {
      input: {
        items: [
          { n: 1, wait: 0 },
          { n: 2, wait: 1 },
          { n: 3, wait: 2 },
        ],
      },
    });
    const inside = await until(async () => {
      const h = await runtime.getHistory(naps.executionId, { limit: 1000 });
      const entered = h.items.filter((e) => e.type === "TaskStateEntered");
      return entered.length === 2 ? entered[1]!.id : undefined;
    });
    const napsFork = await runtime.forkExecution(naps.executionId, {
      fromEventId: inside,
      input: { n: 100, wait: 1 },
    });
    await ended(napsFork.executionId);
    await save("map-forked-inside", napsFork.executionId, ["Map", "Wait", "Task", "Fork"]);
  } finally {
    await worker.close();
    await runtime.close();
    const redis = new Redis(REDIS_URL);
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
    redis.disconnect();
  }
  return n.count;
}

mkdirSync(OUT, { recursive: true });
if (ONLY.size === 0) {
  for (const file of readdirSync(OUT)) if (file.endsWith(".json")) rmSync(join(OUT, file));
}
const memory = ONLY.size === 0 ? await recordMemory() : 0;
const redis = await recordRedis();
console.log(
  `golden: ${memory} in-memory and ${redis} Redis-driver executions in test/golden/ (${readdirSync(OUT).filter((f) => f.endsWith(".json")).length} files)`,
);
