import { EXECUTION_STATUSES } from "../../contract/index.js";
import { defineScript } from "../lua/spec.js";

export interface PurgeArgs {
  base: string;
  /** The execution (short id). */
  exec: string;
  /** Its approvals' ids (from its history). */
  approvals: string[];
}

export type PurgeReply = { kind: "purged" } | { kind: "running" } | { kind: "missing" };

/**
 * purgeExecution: the last step of erasing an ended execution (runtime/executions/purge.ts):
 * its record, history, journal, root run, its approval records and every index
 * entry. The children's keys went before it, in batches; this script goes last
 * because the journal it deletes is what names them, so a purge that died
 * half-way is finished by running it again. A running execution is left whole.
 */
export const purgeExecution = defineScript<PurgeArgs, PurgeReply>()({
  name: "purgeExecution",
  keys: [
    "execution",
    "history",
    "journal",
    "payloads",
    "run",
    "inbox",
    "parked",
    "executions",
    "executionsOf",
  ],
  replies: ["purged", "running", "missing"],
  lua: `
local STATUSES = {${EXECUTION_STATUSES.map((s) => `'${s}'`).join(", ")}}
local base, exec = ARG.base, ARG.exec
local st = redis.call('HGET', KEY.execution, EXEC.status)
if not st then return reply('missing') end
if st == 'RUNNING' then return reply('running') end
for _, id in ipairs(ARG.approvals) do
  local key = base .. KIND.approval .. id
  local f = hmgetNamed(key, APPROVAL, {'indexDims', 'status'})
  for dim in string.gmatch(f.indexDims or '', '%S+') do
    redis.call('ZREM', base .. KIND.approvalIndex .. '*|' .. dim, id)
    if f.status then redis.call('ZREM', base .. KIND.approvalIndex .. f.status .. '|' .. dim, id) end
  end
  redis.call('DEL', key)
end
redis.call('DEL', KEY.execution, KEY.history, KEY.journal, KEY.payloads, KEY.run, KEY.inbox,
  KEY.parked)
redis.call('ZREM', KEY.executions, exec)
redis.call('ZREM', KEY.executionsOf, exec)
local machine = string.match(exec, '^([^:]+):')
for _, status in ipairs(STATUSES) do
  redis.call('ZREM', base .. KIND.statusIndex .. status, exec)
  if machine then redis.call('ZREM', base .. KIND.statusIndex .. status .. ':' .. machine, exec) end
end
return reply('purged')
`,
});
