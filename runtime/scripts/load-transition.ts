import { RUN_STATE_LUA } from "./run-state.js";
import { defineScript } from "./spec.js";

export interface LoadArgs {
  /** The version of the run's frame input the caller holds, if it holds one. */
  inputVersion?: string;
  /**
   * Fields of the execution's record to send too (programs.ts `RECORD_FIELDS`):
   * asked by a process that has not cached the execution, which would otherwise
   * read them in a round trip of their own.
   */
  recordFields?: readonly string[];
}

/**
 * What a transition needs, read in one consistent snapshot. Absent fields are
 * absent in Redis. `input` is the frame input kept apart from the state (field
 * `in`, runtime/frame-input.ts), sent only when its version is not the caller's.
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
      /** The execution is paused (scripts/pause-execution.ts). */
      paused: boolean;
      /** The `recordFields` asked for that the record has, by name. */
      record?: Record<string, string>;
    }
  | { kind: "missing" };

/** loadTransition: one consistent snapshot of what a transition needs (runtime/transition.ts). */
export const loadTransition = defineScript<LoadArgs, LoadReply>()({
  name: "loadTransition",
  keys: ["run", "inbox", "execution"],
  replies: ["loaded", "missing"],
  lua: `${RUN_STATE_LUA}
local run = redis.call('HMGET', KEY.run, 'q', 'fx', 'iv')
if not run[1] then return reply('missing') end
local input = nil
if run[3] and run[3] ~= ARG.inputVersion then input = redis.call('HGET', KEY.run, 'in') end
local x = redis.call('HMGET', KEY.execution, 'hc', 'ps', 'hh')
local record = nil
if ARG.recordFields then
  record = {}
  local values = redis.call('HMGET', KEY.execution, unpack(ARG.recordFields))
  for i, name in ipairs(ARG.recordFields) do
    if values[i] then record[name] = values[i] end
  end
end
return reply('loaded', {
  state = getState(KEY.run) or nil,
  seq = tonumber(run[1]),
  head = redis.call('LINDEX', KEY.inbox, 0) or nil,
  fx = run[2] or nil,
  input = input or nil,
  inputVersion = run[3] or nil,
  historyCount = tonumber(x[1] or '0'),
  historyHead = x[3] or '',
  paused = x[2] ~= false,
  record = record,
})
`,
});
