import {
  APPROVAL_FIELDS,
  EXECUTION_FIELDS,
  MACHINE_FIELDS,
  OPERATION_FIELDS,
  RUN_FIELDS,
  STATS_FIELDS,
  VERSION_FIELDS,
} from "../fields.js";
import { MEMBER_KINDS } from "../ids.js";
import { JOB_ID } from "../job-ids.js";
import { LUA_KINDS } from "../keys.js";

/** The tables of fields.ts by their names in Lua. */
const LUA_FIELD_TABLES = {
  EXEC: EXECUTION_FIELDS,
  RUN: RUN_FIELDS,
  APPROVAL: APPROVAL_FIELDS,
  STATS: STATS_FIELDS,
  MACHINE: MACHINE_FIELDS,
  VERSION: VERSION_FIELDS,
  OPERATION: OPERATION_FIELDS,
} as const;

/**
 * What every script starts with. The names of keys, schedule members, job ids
 * and hash fields are the TypeScript tables (keys.ts, ids.ts, job-ids.ts,
 * fields.ts) written into the Lua source here, so each is spelled once:
 *
 *   KEY.<name>           the script's KEYS by the names it declares
 *   ARG                  its one argument, a MessagePack map (wire.ts)
 *   reply(kind, fields)  its answer: `fields` with `kind`, as MessagePack
 *   KIND.<kind>          key kinds Lua builds keys from: base .. KIND.run .. run
 *   MEMBER.<kind>        schedule member kinds: MEMBER.run .. run
 *   EXEC.<name>, RUN.<name>, APPROVAL.<name>, STATS.<name>, MACHINE.<name>,
 *   VERSION.<name>, OPERATION.<name>
 *                        the stored field names of each kind of hash (fields.ts,
 *                        `LUA_FIELD_TABLES` below): HGET(key, EXEC.status)
 *   hmgetNamed(key, FIELDS, names)   HMGET of the fields `names` of table FIELDS,
 *                        answered by name: hmgetNamed(key, EXEC, {'status'}).status
 *                        (false where absent, as HMGET answers)
 *   hsetNamed(key, FIELDS, values)   HSET of `values`, a table by name
 *   stepJob(run, seq), taskJob(task)   follow-up job ids (job-ids.ts)
 *   fill(template, json) an event built in TypeScript with one JSON value left
 *                        for the script to put in (events.ts `eventTemplate`)
 *
 * `KEY` and `ARG` are the parameters of the body (see `scriptLua`).
 */
export const PRELUDE_LUA = `local function reply(kind, fields)
  fields = fields or {}
  fields.kind = kind
  return cmsgpack.pack(fields)
end
local KIND = ${luaTable(LUA_KINDS)}
local MEMBER = ${luaTable(MEMBER_KINDS)}
${Object.entries(LUA_FIELD_TABLES)
  .map(([name, table]) => `local ${name} = ${luaTable(table)}`)
  .join("\n")}
-- A name no table has is a bug: it fails the call rather than read or write nothing.
local function fieldOf(fields, name)
  return fields[name] or error('no hash field named ' .. tostring(name))
end
local function hmgetNamed(key, fields, names)
  local stored = {}
  for i, name in ipairs(names) do stored[i] = fieldOf(fields, name) end
  local values = redis.call('HMGET', key, unpack(stored))
  local named = {}
  for i, name in ipairs(names) do named[name] = values[i] end
  return named
end
local function hsetNamed(key, fields, values)
  local args = {}
  for name, value in pairs(values) do
    args[#args + 1] = fieldOf(fields, name)
    args[#args + 1] = value
  end
  if #args > 0 then redis.call('HSET', key, unpack(args)) end
end
local function stepJob(run, seq) return '${JOB_ID.step}' .. run .. '${JOB_ID.seq}' .. seq end
local function taskJob(task) return '${JOB_ID.task}' .. task end
local function fill(template, json) return template[1] .. json .. template[2] end
`;

/**
 * The whole source of a script: the prelude, its helpers (defined once per
 * EVALSHA, not once per call: Lua makes a closure of a function each time its
 * definition runs), its body as the function `body(KEY, ARG)`, and the entry
 * that runs the body once per call the EVALSHA carries. Calls of one script
 * sent in the same tick travel together (runtime/store/redis.ts, "Batching"): ARGV
 * holds one argument per call and KEYS each call's keys in turn. Each call
 * answers on its own, in order: its reply, or an error reply when its body
 * raised one (the others still run, as separate EVALSHAs would).
 */
export function scriptLua(keys: readonly string[], body: string, helpers = ""): string {
  const named = keys.map((name, i) => `${name} = KEYS[k + ${i + 1}]`).join(", ");
  return `${PRELUDE_LUA}${helpers}local function body(KEY, ARG)
${body}
end
local out = {}
for c = 1, #ARGV do
  local k = (c - 1) * ${keys.length}
  local ok, r = pcall(body, {${named}}, cmsgpack.unpack(ARGV[c]))
  if not ok then r = {err = type(r) == 'table' and r.err or tostring(r)} end
  out[c] = r or false
end
return out
`;
}

function luaTable(table: Record<string, string>): string {
  const fields = Object.entries(table).map(([name, value]) => {
    if (!/^[A-Za-z0-9:_|*-]*$/.test(value)) throw new Error(`not a plain key kind: '${value}'`);
    return `${name} = '${value}'`;
  });
  return `{${fields.join(", ")}}`;
}
