import { parentPort, workerData } from "node:worker_threads";
import { PayloadNeeded } from "../../engine/core/payload-ref.js";
import { compileExpression } from "../../engine/jsonata/compile.js";
import { configureJsonataLimits } from "../../engine/jsonata/limits.js";
import { configurePathLimits } from "../../engine/jsonpath/budget.js";
import { compileProgram, type Program } from "../../engine/program.js";
import { step } from "../../engine/step.js";
import type { ThreadData, ThreadReply, ThreadRequest } from "./protocol.js";

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
  port.on("message", (request: ThreadRequest) => {
    const reply = request.kind === "step" ? answer(request, programs) : evaluated(request);
    try {
      port.postMessage(reply);
    } catch (err) {
      // A value structured clone cannot copy (an expression that returns a function).
      const message = err instanceof Error ? err.message : String(err);
      port.postMessage({ id: request.id, kind: "threw", name: "DataCloneError", message });
    }
  });
}

/** Definitions kept compiled; a few dozen machines are typical, this bounds the odd case. */
const PROGRAM_LIMIT = 64;

function answer(
  request: Extract<ThreadRequest, { kind: "step" }>,
  programs: Map<string, Program>,
): ThreadReply {
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

/** An expression's value, or what it threw (jsonata throws plain objects with a message). */
function evaluated(request: Extract<ThreadRequest, { kind: "evaluate" }>): ThreadReply {
  const { id } = request;
  try {
    const value = compileExpression(request.expression).evaluate(request.input, request.bindings);
    return { id, kind: "evaluated", value };
  } catch (err) {
    const message = (err as { message?: unknown } | undefined)?.message;
    return { id, kind: "threw", name: "Error", message: String(message ?? err) };
  }
}
