import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import { jsonEqual, type Json } from "../../engine/core/json.js";
import { runExecution } from "../../engine/drivers/memory.js";
import type { TestCase } from "../../engine/testing/cases.js";
import { validateDefinition } from "../../schema/index.js";
import { executionArn } from "../../runtime/store/ids.js";
import { mockRunner } from "../../task-runners/mock.js";
import { loadCases } from "../conformance/load.js";
import { harness, type Harness } from "./helpers.js";

// The conformance cases through the Redis runtime must end as they end in the
// in-memory driver (the reference): same status, error and output. Every 10th
// case keeps the suite fast; STEPWISE_CONFORMANCE_ALL=1 runs them all.
const every = process.env.STEPWISE_CONFORMANCE_ALL ? 1 : 10;

let h: Harness;
const mocks = new Map<string, TestCase["mocks"]>();
beforeAll(async () => {
  h = await harness();
  await h.startWorker({
    concurrency: 32,
    taskRunners: [mockRunner((executionId) => mocks.get(executionId))],
    taskMode: () => "call",
  });
});
afterAll(async () => {
  await h.close();
});

interface Outcome {
  status: string;
  output?: Json;
  error?: string;
}

async function viaMemory(tc: TestCase, machine: string, name: string): Promise<Outcome> {
  const r = await runExecution(tc.definition, {
    input: tc.input ?? {},
    executionName: name,
    stateMachineName: machine,
    ...(tc.mocks ? { mocks: tc.mocks } : {}),
  });
  return r.status === "SUCCEEDED"
    ? { status: r.status, output: r.output ?? null }
    : { status: r.status, ...(r.error !== undefined ? { error: r.error } : {}) };
}

async function viaRedis(tc: TestCase, machine: string, name: string): Promise<Outcome> {
  const exists = await h.runtime.getStateMachine(machine).then(
    () => true,
    () => false,
  );
  const def = tc.definition as StateMachineDefinition;
  if (exists) await h.runtime.updateStateMachine(machine, def);
  else await h.runtime.createStateMachine(machine, def);
  mocks.set(executionArn(machine, name), tc.mocks);
  const { executionId } = await h.runtime.startExecution(machine, { input: tc.input ?? {}, name });
  const r = await h.runtime.waitForExecution(executionId, 20_000);
  return r.status === "SUCCEEDED"
    ? { status: r.status, output: r.output ?? null }
    : { status: r.status, ...(r.error !== undefined ? { error: r.error } : {}) };
}

describe("conformance cases through Redis match the in-memory driver", () => {
  for (const file of ["cases.jsonl", "task-cases.jsonl"] as const) {
    it(`every ${every === 1 ? "" : `${every}th `}case of ${file}`, async () => {
      const cases = loadCases(file).filter((_, i) => i % every === 0);
      const differences: string[] = [];
      let compared = 0;
      // A state machine per case, all running at once: real-time waits overlap.
      await Promise.all(
        cases.map(async (tc, i) => {
          if (!validateDefinition(tc.definition).valid) return; // the runtime refuses what the validator refuses
          const machine = tc.context?.stateMachineName ?? `${file.replace(/\W/g, "")}-${i}`;
          const name = tc.context?.executionName ?? `case-${i}`;
          const memory = await viaMemory(tc, machine, name).catch((e: Error) => ({
            status: `ERROR ${e.message}`,
          }));
          const redis = await viaRedis(tc, `${machine}`, name);
          compared += 1;
          const same =
            memory.status === redis.status &&
            (tc.nondeterministic ||
              jsonEqual((memory as Outcome).output ?? null, redis.output ?? null)) &&
            (memory as Outcome).error === redis.error;
          if (!same)
            differences.push(
              `${tc.id}: memory ${JSON.stringify(memory)} redis ${JSON.stringify(redis)}`,
            );
        }),
      );
      expect(differences).toEqual([]);
      expect(compared).toBeGreaterThan(cases.length * 0.8);
    }, 90_000);
  }
});
