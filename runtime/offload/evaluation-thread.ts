import { parentPort, workerData } from "node:worker_threads";
import { PayloadNeeded } from "../../engine/core/payload-ref.js";
import { configureJsonataLimits } from "../../engine/jsonata/limits.js";
import { configurePathLimits } from "../../engine/jsonpath/budget.js";
import { compileProgram, type Program } from "../../engine/program.js";
import { step } from "../../engine/step.js";
import type { StepReply, StepRequest, ThreadData } from "./protocol.js";

/**
 * The evaluation thread's side: steps the heavy steps a serving thread hands over
 * (step-thread.ts), with the whole budget and no slice, one at a time. It holds no
 * connection and no state beyond compiled definitions: killing it loses nothing.
 */
export function serveSteps(): void {
  const port = parentPort;
  if (!port) throw new Error("serveSteps runs in a worker thread");
  const data = workerData as ThreadData;
  configureJsonataLimits(data.jsonata);
  configurePathLimits(data.paths);
  const programs = new Map<string, Program>();
  port.on("message", (request: StepRequest) => {
    port.postMessage(answer(request, programs));
  });
}

/** Definitions kept compiled; a few dozen machines are typical, this bounds the odd case. */
const PROGRAM_LIMIT = 64;

function answer(request: StepRequest, programs: Map<string, Program>): StepReply {
  const { id } = request;
  let program = programs.get(request.programKey);
  if (!program) {
    if (programs.size >= PROGRAM_LIMIT) programs.clear();
    program = compileProgram(request.definition);
    programs.set(request.programKey, program);
  }
  const execution = {
    ...request.execution,
    loadPayload: (hash: string) => request.payloads[hash],
  };
  try {
    return { id, kind: "stepped", result: step(program, execution, request.run, request.event) };
  } catch (err) {
    if (err instanceof PayloadNeeded) return { id, kind: "payload", hash: err.hash };
    const e = err instanceof Error ? err : new Error(String(err));
    return { id, kind: "threw", name: e.name, message: e.message };
  }
}
