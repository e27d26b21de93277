/**
 * The anchor of bench/cli-start.ts: runs `stepwise test` cases (cases.jsonl beside it)
 * on aws-local-stepfunctions through its JS API, as `stepwise test` does on ours: each
 * definition validated (its StateMachine constructor), each case's mocks served in
 * order per Task state (`taskResourceLocalHandlers`), waits and retry intervals
 * overridden to 0 (our virtual clock costs nothing either), every result checked
 * against "expect". Prints "N passed, M failed"; exit 0 only when all pass.
 *
 *   node local-sfn-runner.mjs <path of aws-local-stepfunctions' ESM build> CASES.jsonl [INDEX...]
 *
 * With INDEXes only those cases (0-based) run: the bench's one-process-per-case form.
 * Plain JavaScript so that node runs it as is (no tsx in the anchor's start-up).
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { pathToFileURL } from "node:url";

// aws-local-stepfunctions 3 targets node >= 22: its Task state calls Promise.withResolvers.
Promise.withResolvers ??= function withResolvers() {
  let resolve, reject;
  const promise = new this((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

const [modulePath, casesFile, ...only] = process.argv.slice(2);
const { StateMachine } = await import(pathToFileURL(modulePath).href);
const base = dirname(resolve(casesFile));
const all = readFileSync(casesFile, "utf8")
  .split("\n")
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l));
const cases = only.length > 0 ? only.map((i) => all[Number(i)]) : all;

/** One StateMachine per definition file, as a user's test file would keep it. */
const machines = new Map();
function machineFor(file) {
  let entry = machines.get(file);
  if (!entry) {
    const definition = JSON.parse(readFileSync(resolve(base, file), "utf8"));
    const waits = {};
    const retries = {};
    visit(definition, (name, state) => {
      if (state.Type === "Wait") waits[name] = 0;
      if (state.Retry) retries[name] = 0;
    });
    entry = { machine: new StateMachine(definition), waits, retries };
    machines.set(file, entry);
  }
  return entry;
}

function visit(machine, onState) {
  for (const [name, state] of Object.entries(machine.States)) {
    onState(name, state);
    for (const branch of state.Branches ?? []) visit(branch, onState);
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor) visit(processor, onState);
  }
}

function handlers(mocks) {
  const queues = Object.fromEntries(Object.entries(mocks ?? {}).map(([k, v]) => [k, [...v]]));
  return Object.fromEntries(
    Object.keys(queues).map((name) => [
      name,
      async () => {
        const next = queues[name].shift();
        if (!next)
          throw Object.assign(new Error(`no mocked response left for ${name}`), {
            name: "States.TaskFailed",
          });
        if ("Return" in next) return next.Return;
        throw Object.assign(new Error(next.Throw.Cause ?? ""), { name: next.Throw.Error });
      },
    ]),
  );
}

async function runCase(tc) {
  const { machine, waits, retries } = machineFor(tc.definition);
  const execution = machine.run(tc.input ?? {}, {
    overrides: {
      taskResourceLocalHandlers: handlers(tc.mocks),
      waitTimeOverrides: waits,
      retryIntervalOverrides: retries,
    },
  });
  let actual;
  try {
    actual = { status: "SUCCEEDED", output: await execution.result };
  } catch (err) {
    actual = { status: "FAILED", error: err.cause?.name ?? err.name };
  }
  const e = tc.expect;
  if (e.status !== actual.status) return false;
  if (e.status === "SUCCEEDED")
    return e.output === undefined || isDeepStrictEqual(e.output, actual.output);
  return e.error === undefined || e.error === actual.error;
}

let passed = 0;
const failures = [];
await Promise.all(
  cases.map(async (tc) => {
    const verdict = await runCase(tc);
    if (verdict === true) passed++;
    else failures.push(tc.id);
  }),
);
for (const id of failures) process.stdout.write(`FAIL ${id}\n`);
process.stdout.write(`${passed} passed, ${cases.length - passed} failed\n`);
process.exitCode = passed === cases.length ? 0 : 1;
