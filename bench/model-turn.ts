/**
 * Engine overhead per model turn: a state machine loops `Plan` (stepwise:model) →
 * `More?` (Choice) for T turns on the durable runtime (Redis + worker), against a fake
 * OpenAI-compatible server on 127.0.0.1 that answers at once.
 *
 *   npx tsx bench/model-turn.ts [--turns T] [--executions E]
 *
 * 1. the model call alone: T sequential runner calls (request building, fetch over
 *    keep-alive, normalising) with no engine;
 * 2. one execution of T turns: wall time per turn, and engine overhead per turn =
 *    that minus the time the worker spent inside the model runner (what is left:
 *    commits, BullMQ hand-offs, the budget read, the Choice);
 * 3. the same loop with an in-process function task answering the same output at once:
 *    the runtime's cost of any task turn, for comparison;
 * 4. E executions of T turns at once: turns per second.
 *
 * Target: engine overhead < 2 ms per turn. Uses a random Redis prefix and deletes its keys.
 */
import { randomBytes } from "node:crypto";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { Redis } from "ioredis";
import type { StateMachineDefinition } from "../engine/core/definition.js";
import { createRedisRuntime } from "../runtime/runtime.js";
import { startWorker } from "../runtime/worker/worker.js";
import { functionRunner } from "../task-runners/function.js";
import { modelRunner } from "../task-runners/model/index.js";
import type { TaskRunner } from "../task-runners/runner.js";
import { countOption } from "./harness.js";

const TURNS = countOption("turns", 500);
const EXECUTIONS = countOption("executions", 16);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A chat completion that asks for a tool, answered without delay. */
const ANSWER = JSON.stringify({
  model: "bench-1",
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
        ],
      },
    },
  ],
  usage: { prompt_tokens: 120, completion_tokens: 12 },
});

const ARGUMENTS = { Messages: [{ role: "user", content: "next step?" }] };

const DEFINITION: StateMachineDefinition = {
  QueryLanguage: "JSONata",
  StartAt: "Start",
  States: {
    Start: { Type: "Pass", Assign: { turn: 0, turns: "{% $states.input.turns %}" }, Next: "Plan" },
    Plan: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:model",
      Arguments: ARGUMENTS,
      Assign: { turn: "{% $turn + 1 %}" },
      Output: "{% $states.result.message.toolCalls[0].name %}",
      Next: "More",
    },
    More: {
      Type: "Choice",
      Choices: [{ Condition: "{% $turn < $turns %}", Next: "Plan" }],
      Default: "Done",
    },
    Done: { Type: "Succeed", Output: "{% $turn %}" },
  },
};

/**
 * The fake model runs in a process of its own: in this one, its HTTP work would run on
 * the worker's event loop and be counted as engine overhead.
 */
const SERVER = `
const { createServer } = require("node:http");
const answer = process.argv[1];
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(answer);
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;

async function startModel(): Promise<{ baseUrl: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["-e", SERVER, ANSWER], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  return { baseUrl: `http://127.0.0.1:${line.toString().trim()}/v1`, child };
}

async function main(): Promise<void> {
  const { baseUrl, child: server } = await startModel();
  const runner = modelRunner({ endpoints: { default: { baseUrl, model: "bench-1" } } });

  const prefix = `stepwise-bench-${randomBytes(4).toString("hex")}`;
  const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
  const normalised = await runner.run({
    resource: "stepwise:model",
    stateName: "Plan",
    taskId: "t",
    operationKey: "k",
    executionId: "bench",
    attempt: 0,
    input: ARGUMENTS,
    signal: new AbortController().signal,
  });
  const instant = functionRunner({ instant: async () => normalised });
  // The time the worker spends inside the model runner (request, fetch, normalising).
  let inRunner = 0;
  const timed: TaskRunner = {
    ...runner,
    async run(request) {
      const t = performance.now();
      try {
        return await runner.run(request);
      } finally {
        inRunner += performance.now() - t;
      }
    },
  };
  const worker = await startWorker({
    redisUrl: REDIS_URL,
    prefix,
    taskRunners: [timed, instant],
  });
  const redis = new Redis(REDIS_URL);
  try {
    // 1. The model call alone.
    const signal = new AbortController().signal;
    const call = (i: number) =>
      runner.run({
        resource: "stepwise:model",
        stateName: "Plan",
        taskId: `t${i}`,
        operationKey: `k${i}`,
        executionId: "bench",
        attempt: 0,
        input: ARGUMENTS,
        signal,
      });
    for (let i = 0; i < 200; i++) await call(i); // warm-up
    let t0 = performance.now();
    for (let i = 0; i < TURNS; i++) await call(i);
    const bare = (performance.now() - t0) / TURNS;
    console.log(`model call alone (runner + fetch on 127.0.0.1): ${bare.toFixed(3)} ms`);

    await runtime.createStateMachine("model-turns", DEFINITION);
    await runtime.createStateMachine("function-turns", {
      ...DEFINITION,
      States: {
        ...DEFINITION.States,
        Plan: { ...DEFINITION.States.Plan!, Resource: "function:instant" },
      },
    } as StateMachineDefinition);
    const run = async (turns: number, machine = "model-turns") => {
      const { executionId } = await runtime.startExecution(machine, { input: { turns } });
      const ended = await runtime.waitForExecution(executionId, 600_000);
      if (ended.status !== "SUCCEEDED") throw new Error(`ended ${JSON.stringify(ended)}`);
    };
    await run(100); // warm-up: JIT, BullMQ scripts

    // 2. One execution, turn after turn.
    inRunner = 0;
    t0 = performance.now();
    await run(TURNS);
    const perTurn = (performance.now() - t0) / TURNS;
    const model = inRunner / TURNS;
    console.log(
      `one execution, ${TURNS} turns: ${perTurn.toFixed(3)} ms per turn, of which ${model.toFixed(3)} ms in the model runner; ` +
        `engine overhead ${(perTurn - model).toFixed(3)} ms per turn (target < 2 ms)`,
    );

    // 3. The same turn with a task that needs no network.
    await run(100, "function-turns");
    t0 = performance.now();
    await run(TURNS, "function-turns");
    const functionTurn = (performance.now() - t0) / TURNS;
    console.log(
      `same loop, in-process function task instead of the model: ${functionTurn.toFixed(3)} ms per turn`,
    );

    // 4. Many at once.
    t0 = performance.now();
    await Promise.all(Array.from({ length: EXECUTIONS }, () => run(TURNS)));
    const seconds = (performance.now() - t0) / 1000;
    console.log(
      `${EXECUTIONS} executions × ${TURNS} turns at once: ${Math.round((EXECUTIONS * TURNS) / seconds)} turns/s`,
    );
  } finally {
    await worker.close();
    await runtime.close();
    server.kill();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
    redis.disconnect();
  }
}

await main();
