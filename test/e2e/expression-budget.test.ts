import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

/**
 * The outside probe's inputs (issue 44) through the binary: each used to hold the
 * process (API and worker of `stepwise serve` alike) for 6 s to more than two
 * minutes, `/health` waiting as long. Each is sent through TestState and through a
 * started execution while `/health` is polled; every state ends in its ASL error
 * (or its answer) and every health check answers 200. The latencies are printed
 * (the figures of the note); only a generous bound is asserted, the machine being
 * shared.
 */
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

/** `{"a": {"a": … 1}}`, `depth` levels (250: 4.5 KB, under the API's depth limit of 256). */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const jsonata = (expression: string) => ({
  QueryLanguage: "JSONata",
  Type: "Pass",
  Output: `{% ${expression} %}`,
  End: true,
});

interface Probe {
  name: string;
  state: Record<string, unknown>;
  input: unknown;
  /** What the state ends in: its error, or its output. */
  expected: { error: string } | { output: unknown };
}

const PROBES: Probe[] = [
  {
    name: "match-130",
    state: jsonata('$match($pad("", 130, "a"), /a*a*a*a*a*b/)'),
    input: {},
    // Nothing matches: the expression returns nothing.
    expected: { error: "States.QueryEvaluationError" },
  },
  {
    name: "alternation-26",
    state: jsonata("$contains($pad('', 26, 'a') & '!', /^(a|a)+$/)"),
    input: {},
    expected: { output: false },
  },
  {
    name: "replace-900000",
    state: jsonata("$replace($pad('',900000,'a'), /a*a*a*a*a*b/, 'c')"),
    input: {},
    // 900,000 characters are more than a state's output may hold.
    expected: { error: "States.DataLimitExceeded" },
  },
  {
    name: "deep-scan-250",
    state: { Type: "Pass", InputPath: "$..a..a..a", End: true },
    input: nested(250),
    expected: { error: "States.Runtime" },
  },
  {
    // Not in the probe: linear per search, quadratic over all matches, so it runs
    // until the step budget (about a second of CPU) stops it.
    name: "rescan-20000",
    state: jsonata("$replace($pad('', 20000, 'a'), /a*b|a/, 'c')"),
    input: {},
    expected: { error: "States.QueryEvaluationError" },
  },
];

interface Figures {
  answerMs: number;
  health: number[];
}

const figures: Record<string, Figures> = {};

/** Runs `request` while polling /health without a key; every health answer is kept. */
async function whilePolling<T>(
  request: () => Promise<T>,
): Promise<{ result: T; answerMs: number; health: { status: number; ms: number }[] }> {
  const health: { status: number; ms: number }[] = [];
  let done = false;
  const poller = (async () => {
    do {
      const started = performance.now();
      const reply = await stack.client.get("/health", { key: null });
      health.push({ status: reply.status, ms: performance.now() - started });
      await new Promise((r) => setTimeout(r, 5));
    } while (!done);
  })();
  // Let the first health check leave before the probe.
  await new Promise((r) => setTimeout(r, 5));
  const started = performance.now();
  const result = await request();
  const answerMs = performance.now() - started;
  done = true;
  await poller;
  return { result, answerMs, health };
}

function record(label: string, answerMs: number, health: { status: number; ms: number }[]): void {
  figures[label] = { answerMs: Math.round(answerMs), health: health.map((h) => Math.round(h.ms)) };
  for (const h of health) expect(h.status).toBe(200);
  // The probe's inputs took 6 s to minutes; only a generous bound on a shared machine.
  expect(answerMs).toBeLessThan(10_000);
  expect(Math.max(...health.map((h) => h.ms))).toBeLessThan(10_000);
}

describe("the probe's slow expressions, through the binary", () => {
  it.each(PROBES)("$name through TestState", async (probe) => {
    const { result, answerMs, health } = await whilePolling(() =>
      stack.client.post("/v1/state-machines/test-state", {
        definition: probe.state,
        input: probe.input,
        inspectionLevel: "DEBUG",
      }),
    );
    expect(result.status).toBe(200);
    if ("error" in probe.expected) {
      expect(result.body).toMatchObject({ status: "FAILED", error: probe.expected.error });
    } else {
      expect(result.body).toMatchObject({ status: "SUCCEEDED", output: probe.expected.output });
    }
    record(`${probe.name} TestState`, answerMs, health);
  });

  it.each(PROBES)("$name as an execution", async (probe) => {
    const definition = {
      ...(probe.state.QueryLanguage !== undefined ? { QueryLanguage: "JSONata" } : {}),
      StartAt: "S",
      States: { S: probe.state },
    };
    const created = await stack.client.post("/v1/state-machines", {
      name: probe.name,
      definition,
    });
    expect(created.status).toBe(201);
    const { result, answerMs, health } = await whilePolling(() =>
      stack.client.post(`/v1/state-machines/${probe.name}/executions?wait=10`, {
        input: probe.input,
      }),
    );
    expect(result.status).toBe(201);
    if ("error" in probe.expected) {
      expect(result.body).toMatchObject({ status: "FAILED", error: probe.expected.error });
    } else {
      expect(result.body).toMatchObject({ status: "SUCCEEDED", output: probe.expected.output });
    }
    record(`${probe.name} execution`, answerMs, health);
  });

  afterAll(() => {
    const lines = Object.entries(figures).map(
      ([label, f]) =>
        `${label.padEnd(28)} answer ${String(f.answerMs).padStart(5)} ms   /health ${f.health.join(", ")} ms`,
    );
    console.log(`expression budget figures:\n${lines.join("\n")}`);
  });
});
