import { Worker } from "node:worker_threads";
import type { RunEvent } from "../../engine/core/events.js";
import type { Json } from "../../engine/core/json.js";
import { PayloadNeeded } from "../../engine/core/payload-ref.js";
import type { ExecutionContext, RunState } from "../../engine/core/run.js";
import { jsonataLimits } from "../../engine/jsonata/limits.js";
import { pathLimits } from "../../engine/jsonpath/budget.js";
import type { Program } from "../../engine/program.js";
import type { StepResult } from "../../engine/step.js";
import type { ThreadData, ThreadReply, ThreadRequest } from "./protocol.js";

/**
 * The serving thread's side of the evaluation thread: a step handed over is sent
 * with what it reads, and its result comes back as if it had run here. One thread:
 * heavy steps are rare, each is bounded by its budget (about a second of CPU), and a
 * 2-core machine has one core besides the one that serves. The thread starts on the
 * first heavy step and is started again after it dies (its resource limit, a bug):
 * the step it was running fails with the reason, as a step that throws does.
 */
export class StepThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (reply: ThreadReply) => void; reject: (err: Error) => void }
  >();
  private readonly keys = new WeakMap<Program, string>();
  private closed = false;
  /** Steps run on the thread so far (`stepwise_steps_offloaded_total`). */
  offloaded = 0;

  constructor(private readonly entry: URL) {}

  /** `step(program, execution, run, event)`, on the thread. */
  async step(
    program: Program,
    execution: ExecutionContext,
    run: RunState,
    event: RunEvent,
  ): Promise<StepResult> {
    this.offloaded++;
    const { loadPayload, ...plain } = execution;
    const payloads: Record<string, Json> = {};
    for (;;) {
      const reply = await this.send({
        id: this.nextId++,
        kind: "step",
        programKey: this.keyOf(program),
        definition: program.definition,
        execution: plain,
        run,
        event,
        payloads,
      });
      switch (reply.kind) {
        case "stepped":
          return reply.result;
        case "payload": {
          // Loaded here already (the driver's cache): send it along. Else the driver
          // loads it, as it does for a step that ran here, and steps again.
          const value = loadPayload?.(reply.hash);
          if (value === undefined || reply.hash in payloads) throw new PayloadNeeded(reply.hash);
          payloads[reply.hash] = value;
          break;
        }
        case "threw":
          throw Object.assign(new Error(reply.message), { name: reply.name });
        case "evaluated":
          throw new Error("the evaluation thread answered a step with a value");
      }
    }
  }

  /** A JSONata expression's value on `input` with `bindings`, on the thread; throws what it throws. */
  async evaluate(
    expression: string,
    input: Json,
    bindings: Record<string, Json>,
  ): Promise<unknown> {
    this.offloaded++;
    const reply = await this.send({
      id: this.nextId++,
      kind: "evaluate",
      expression,
      input,
      bindings,
    });
    if (reply.kind === "evaluated") return reply.value;
    if (reply.kind === "threw") throw Object.assign(new Error(reply.message), { name: reply.name });
    throw new Error(`the evaluation thread answered an expression with ${reply.kind}`);
  }

  /** Ends the thread; steps still on it fail. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private send(request: ThreadRequest): Promise<ThreadReply> {
    if (this.closed) return Promise.reject(new Error("the evaluation thread is closed"));
    const worker = this.worker ?? this.start();
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      worker.postMessage(request);
    });
  }

  private start(): Worker {
    const data: ThreadData = { jsonata: { ...jsonataLimits() }, paths: { ...pathLimits() } };
    const worker = new Worker(this.entry, {
      workerData: data,
      // The budgets bound what a step builds (strings, sequences, path results) well
      // under this; a thread past it dies alone, not the process.
      resourceLimits: { maxOldGenerationSizeMb: 1024 },
    });
    // A serving process ends when its work does: an idle thread does not hold it.
    worker.unref();
    worker.on("message", (reply: ThreadReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      waiting?.resolve(reply);
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      const waiting = [...this.pending.values()];
      this.pending.clear();
      for (const w of waiting) w.reject(err);
    };
    worker.on("error", (err) => fail(new Error(`the evaluation thread failed: ${err.message}`)));
    worker.on("exit", (code) => fail(new Error(`the evaluation thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private keyOf(program: Program): string {
    let key = this.keys.get(program);
    if (key === undefined) {
      key = JSON.stringify(program.definition);
      this.keys.set(program, key);
    }
    return key;
  }
}
