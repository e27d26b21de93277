/**
 * How long validateDefinition takes on a 1,000-state definition: a mix of Pass
 * (Parameters with intrinsic functions), Task (Retry, Catch, paths) and Choice
 * states. Prints the median and p95 over many runs after a warm-up; the aim is
 * under 20 ms.
 *
 *   npx tsx bench/validate.ts
 */
import type { JsonObject } from "../engine/core/json.js";
import { validateDefinition } from "../schema/index.js";

const STATES = 1000;
const WARMUP = 20;
const RUNS = 200;

function buildDefinition(count: number): JsonObject {
  const states: JsonObject = {};
  const name = (i: number): string => (i >= count ? "Done" : `Step ${i}`);
  for (let i = 0; i < count; i++) {
    switch (i % 3) {
      case 0:
        states[name(i)] = {
          Type: "Pass",
          Parameters: {
            "id.$": "States.UUID()",
            "greeting.$": "States.Format('Hello {} #{}', $.user.name, $.counter)",
            "items.$": "States.ArrayPartition($.items, 2)",
            "first.$": "$.items[0]",
            static: { step: i, tags: ["a", "b"] },
          },
          ResultPath: `$.pass${i}`,
          Next: name(i + 1),
        };
        break;
      case 1:
        states[name(i)] = {
          Type: "Task",
          Resource: "arn:aws:states:::lambda:invoke",
          Parameters: {
            FunctionName: "arn:aws:lambda:us-east-1:123456789012:function:work",
            "Payload.$": "$",
          },
          ResultSelector: { "body.$": "$.Payload.body" },
          ResultPath: "$.result",
          TimeoutSeconds: 60,
          HeartbeatSeconds: 10,
          Retry: [
            {
              ErrorEquals: ["States.Timeout", "Lambda.ServiceException"],
              IntervalSeconds: 2,
              MaxAttempts: 3,
              BackoffRate: 2,
            },
            { ErrorEquals: ["States.ALL"], MaxAttempts: 1, JitterStrategy: "FULL" },
          ],
          Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.error", Next: "Failed" }],
          Next: name(i + 1),
        };
        break;
      default:
        states[name(i)] = {
          Type: "Choice",
          Choices: [
            { Variable: "$.result.body.status", StringEquals: "DONE", Next: name(i + 1) },
            {
              And: [
                { Variable: "$.counter", NumericGreaterThanEquals: 10 },
                { Not: { Variable: "$.flag", IsNull: true } },
              ],
              Next: name(i + 2),
            },
          ],
          Default: name(i + 1),
        };
    }
  }
  states.Done = { Type: "Succeed" };
  states.Failed = { Type: "Fail", Error: "WorkFailed", Cause: "A task failed" };
  return { Comment: `${count} states`, StartAt: name(0), States: states };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function measure(label: string, source: unknown): void {
  const first = validateDefinition(source);
  if (!first.valid) {
    console.error(`${label}: the benchmark definition is invalid`, first.diagnostics.slice(0, 5));
    process.exitCode = 1;
    return;
  }
  for (let i = 0; i < WARMUP; i++) validateDefinition(source);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    validateDefinition(source);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${label}: median ${percentile(times, 50).toFixed(2)} ms, p95 ${percentile(times, 95).toFixed(2)} ms (${RUNS} runs)`,
  );
}

const definition = buildDefinition(STATES);
const text = JSON.stringify(definition, null, 2);
console.log(
  `validateDefinition, ${STATES} states (${(text.length / 1024).toFixed(0)} KiB as JSON):`,
);
measure("object input   ", definition);
measure("JSON text input", text);
