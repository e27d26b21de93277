import type { ExecutionField } from "../fields.js";
import { RUN_STATE_LUA } from "../lua/run-state.js";
import { defineScript } from "../lua/spec.js";

export interface LoadArgs {
  /** The key prefix: a child execution's record is built from it (`RUN.historyOwner`). */
  base?: string;
  /** The version of the run's frame input the caller holds, if it holds one. */
  inputVersion?: string;
  /**
   * Fields of the execution's record to send too, by name (commit/execution-cache.ts
   * `RECORD_FIELDS`): asked by a process that has not cached the execution, which
   * would otherwise read them in a round trip of their own.
   */
  recordFields?: readonly ExecutionField[];
}

/**
 * What a transition needs, read in one consistent snapshot. Absent fields are
 * absent in Redis. `input` is the frame input kept apart from the state (`RUN.input`,
 * runtime/payloads/frame-input.ts), sent only when its version is not the caller's.
 */
export type LoadReply =
  | {
      kind: "loaded";
      /** Stored form (codec.ts). */
      state?: string;
      seq: number;
      /** The inbox head: the event the next transition takes. */
      head?: string;
      /** The last commit's follow-ups (job-ids.ts). */
      fx?: string;
      input?: string;
      inputVersion?: string;
      /** The execution's history count and chain head (runtime/audit/chain.ts, '' when none). */
      historyCount: number;
      historyHead: string;
      /** The execution is paused (store/scripts/pause-execution.ts). */
      paused: boolean;
      /** The `recordFields` asked for that the record has, by name. */
      record?: Partial<Record<ExecutionField, string>>;
    }
  | { kind: "missing" };

/** What a load finds (`LoadReply` "loaded" without its kind): a claim hands it out too (claim-due.ts). */
export type LoadSnapshot = Omit<Extract<LoadReply, { kind: "loaded" }>, "kind">;

/**
 * Lua helper: loadedOf(base, runKey, execKey, run, head, inputVersion, recordFields)
 * builds the snapshot of a run whose hash was read with readRun(runKey) into
 * \`run\` and whose inbox head is \`head\`: two reads, the run hash (seq,
 * follow-ups, input version and, mostly, the whole state) and the record
 * (history count, pause, chain head and the fields asked, by name). A Map Run's
 * child execution (\`run.historyOwner\`) writes the history of its own record:
 * its count and head come from there (a third read).
 */
export const LOAD_LUA = `${RUN_STATE_LUA}
local function loadedOf(base, runKey, execKey, run, head, inputVersion, recordFields)
  local input = nil
  if run.inputVersion and run.inputVersion ~= inputVersion then
    input = redis.call('HGET', runKey, RUN.input)
  end
  local names = {'historyCount', 'pause', 'historyHead'}
  for _, name in ipairs(recordFields or {}) do names[#names + 1] = name end
  local x = hmgetNamed(execKey, EXEC, names)
  if run.historyOwner and base then
    local owner = hmgetNamed(base .. KIND.execution .. run.historyOwner, EXEC, {'historyCount', 'historyHead'})
    x.historyCount, x.historyHead = owner.historyCount, owner.historyHead
  end
  local record = nil
  if recordFields then
    record = {}
    for _, name in ipairs(recordFields) do
      if x[name] then record[name] = x[name] end
    end
  end
  return {
    state = stateOf(runKey, run) or nil,
    seq = tonumber(run.seq),
    head = head or nil,
    fx = run.followUps or nil,
    input = input or nil,
    inputVersion = run.inputVersion or nil,
    historyCount = tonumber(x.historyCount or '0'),
    historyHead = x.historyHead or '',
    paused = x.pause ~= false,
    record = record,
  }
end
`;

/** loadTransition: one consistent snapshot of what a transition needs (runtime/commit/transition.ts). */
export const loadTransition = defineScript<LoadArgs, LoadReply>()({
  name: "loadTransition",
  keys: ["run", "inbox", "execution"],
  replies: ["loaded", "missing"],
  helpers: [LOAD_LUA],
  lua: `
local run = readRun(KEY.run)
if not run.seq then return reply('missing') end
local head = redis.call('LINDEX', KEY.inbox, 0)
return reply('loaded', loadedOf(ARG.base, KEY.run, KEY.execution, run, head, ARG.inputVersion, ARG.recordFields))
`,
});
