import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { ExecutionContext } from "../../engine/core/run.js";
import { compileProgram, type Program } from "../../engine/program.js";
import { executionArn, stateMachineArn } from "../store/ids.js";
import type { ShardLayout } from "../shards/shards.js";
import { readRecordText, referenced } from "../payloads/history-payloads.js";
import { LoadedPayloads } from "../payloads/payload-refs.js";
import type { PayloadPolicy } from "../../engine/core/payload-ref.js";
import type { RedisClient } from "../store/redis.js";
import {
  byName,
  EXECUTION_FIELDS,
  storedFields,
  VERSION_FIELDS,
  type ExecutionField,
} from "../store/fields.js";
import { traceOfRecord, type ExecutionTrace } from "../tracing/trace-context.js";

export interface LoadedExecution {
  context: ExecutionContext;
  program: Program;
  /** The execution's W3C trace, set at its start and never changed (tracing/). */
  trace: ExecutionTrace;
}

/**
 * The fields of an execution's record its context is built from, by name
 * (store/fields.ts). A transition of an execution this process has not cached
 * reads them with its run (store/scripts/load-transition.ts), not in a round trip
 * of their own.
 */
export const RECORD_FIELDS = [
  "machine",
  "version",
  "name",
  "startedAt",
  "input",
  "traceId",
  "parentSpanId",
  "traceState",
  "roleArn",
] as const satisfies readonly ExecutionField[];

/** The record's `RECORD_FIELDS` it has, by name. */
export type RecordFields = Partial<Record<ExecutionField, string>>;

/**
 * What never changes once an execution started: its context (`$$.Execution…`)
 * and the compiled definition version it is pinned to. Cached per process, so a
 * transition reads only the run from Redis.
 */
export class ExecutionCache {
  private readonly executions = new Map<string, LoadedExecution>();
  private readonly programs = new Map<string, Promise<Program>>();
  /** The versions compiled so far, for `rememberNow`. */
  private readonly compiled = new Map<string, Program>();
  /** Each compiled version's definition hash (the version hash's `hash`), for the history chain. */
  private readonly hashes = new Map<string, string>();

  constructor(
    private readonly client: RedisClient,
    /** The executions' shards (and the control keys of the state machines). */
    private readonly layout: Pick<ShardLayout, "control" | "keysOf">,
    private readonly limit = 20_000,
    /** Large payloads go by reference (engine/core/payload-ref.ts); unset, as on AWS. */
    private readonly payloadPolicy?: PayloadPolicy,
  ) {}

  private readonly loadedPayloads = new LoadedPayloads();

  /** Makes a stored payload of `exec` readable by its steps; false when it has none such. */
  loadPayload(exec: string, hash: string): Promise<boolean> {
    return this.loadedPayloads.load(this.client, this.layout.keysOf(exec), exec, hash);
  }

  async get(exec: string): Promise<LoadedExecution> {
    const hit = this.executions.get(exec);
    if (hit) return hit;
    const values = await this.client.redis.hmget(
      this.layout.keysOf(exec).execution(exec),
      ...storedFields(EXECUTION_FIELDS, RECORD_FIELDS),
    );
    const record: RecordFields = {};
    for (const [name, value] of Object.entries(byName(RECORD_FIELDS, values))) {
      if (value !== null) record[name as ExecutionField] = value;
    }
    return this.remember(exec, record);
  }

  /** Whether `get(exec)` would answer without reading Redis. */
  has(exec: string): boolean {
    return this.executions.has(exec);
  }

  /** Drops `exec` from the cache (it ended); a later `get` reads its record again. */
  forget(exec: string): void {
    this.executions.delete(exec);
  }

  /** Caches `exec` from its record's `RECORD_FIELDS` (absent ones left out), read elsewhere. */
  async remember(exec: string, record: RecordFields): Promise<LoadedExecution> {
    const hit = this.executions.get(exec);
    if (hit) return hit;
    const fields = contextFields(exec, record);
    const program = await this.program(fields.machine, Number(fields.version));
    const text = await readRecordText(this.client, this.layout.keysOf(exec), exec, fields.input);
    return this.executions.get(exec) ?? this.cache(exec, fields, record, program, text);
  }

  /**
   * `remember` without a turn of the event loop, when it needs no read: the
   * version is compiled and the input is in the record. Undefined otherwise. A
   * burst of fired timers remembers every execution it ends (all are cold).
   */
  rememberNow(exec: string, record: RecordFields): LoadedExecution | undefined {
    const hit = this.executions.get(exec);
    if (hit) return hit;
    const fields = contextFields(exec, record);
    const program = this.compiled.get(`${fields.machine}@${fields.version}`);
    if (!program || referenced(fields.input)) return undefined;
    return this.cache(exec, fields, record, program, fields.input);
  }

  /** The cached execution, if cached (`get` without a turn of the event loop). */
  peek(exec: string): LoadedExecution | undefined {
    return this.executions.get(exec);
  }

  private cache(
    exec: string,
    { machine, name, startedAt: startTime }: ContextFields,
    { traceId, parentSpanId, traceState, roleArn }: RecordFields,
    program: Program,
    inputText: string,
  ): LoadedExecution {
    const context: ExecutionContext = {
      executionId: executionArn(machine, name),
      name,
      startTime,
      input: JSON.parse(inputText),
      stateMachineId: stateMachineArn(machine),
      stateMachineName: machine,
      seed: name,
    };
    if (roleArn !== undefined) context.roleArn = roleArn;
    if (this.payloadPolicy) {
      context.payloads = this.payloadPolicy;
      context.loadPayload = (hash) => this.loadedPayloads.get(hash);
    }
    // Computed when first asked (a span, a log line): an execution's own trace id is a
    // SHA-256, which every cold transition of a burst of fired timers would pay.
    let trace: ExecutionTrace | undefined;
    const loaded: LoadedExecution = {
      context,
      program,
      get trace() {
        return (trace ??= traceOfRecord(
          context.executionId,
          startTime,
          traceId,
          parentSpanId,
          traceState,
        ));
      },
    };
    if (this.executions.size >= this.limit) {
      // Oldest first (Map keeps insertion order): a cheap bound, not a true LRU.
      const oldest = this.executions.keys().next().value;
      if (oldest !== undefined) this.executions.delete(oldest);
    }
    this.executions.set(exec, loaded);
    return loaded;
  }

  /** A definition version, compiled once per process (versions are immutable). */
  program(machine: string, version: number): Promise<Program> {
    const id = `${machine}@${version}`;
    let program = this.programs.get(id);
    if (!program) {
      program = this.client.redis
        .hmget(
          this.layout.control.machineVersion(machine, version),
          ...storedFields(VERSION_FIELDS, ["definition", "definitionHash"]),
        )
        .then(([def, hash]) => {
          if (!def) throw new Error(`state machine ${id} has no definition`);
          if (hash) this.hashes.set(id, hash);
          const compiled = compileProgram(JSON.parse(def) as StateMachineDefinition);
          this.compiled.set(id, compiled);
          return compiled;
        });
      program.catch(() => this.programs.delete(id));
      this.programs.set(id, program);
    }
    return program;
  }

  /** The definition hash machines.ts recorded for a version (the chain's identity, audit/chain.ts). */
  async definitionHash(machine: string, version: number): Promise<string> {
    await this.program(machine, version);
    const hash = this.hashes.get(`${machine}@${version}`);
    if (hash === undefined) throw new Error(`state machine ${machine}@${version} has no hash`);
    return hash;
  }
}

/** The record fields an execution's context is built from. */
type ContextFields = Required<
  Pick<RecordFields, "machine" | "version" | "name" | "startedAt" | "input">
>;

/** `record`'s context fields; a record without them all is no execution's. */
function contextFields(exec: string, record: RecordFields): ContextFields {
  const { machine, version, name, startedAt, input } = record;
  if (!machine || !version || !name || !startedAt || input == null)
    throw new Error(`execution '${exec}' has no record`);
  return { machine, version, name, startedAt, input };
}
