import { MEMBER_KINDS } from "../ids.js";
import { JOB_ID } from "../job-ids.js";
import { LUA_KINDS } from "../keys.js";

/**
 * What every script starts with. The names of keys, schedule members and job
 * ids are the TypeScript tables (keys.ts, ids.ts, job-ids.ts) written into the
 * Lua source here, so a kind is spelled once:
 *
 *   KEY.<name>           the script's KEYS by the names it declares
 *   ARG                  its one argument, a MessagePack map (wire.ts)
 *   reply(kind, fields)  its answer: `fields` with `kind`, as MessagePack
 *   KIND.<kind>          key kinds Lua builds keys from: base .. KIND.run .. run
 *   MEMBER.<kind>        schedule member kinds: MEMBER.run .. run
 *   stepJob(run, seq), taskJob(task)   follow-up job ids (job-ids.ts)
 *   fill(template, json) an event built in TypeScript with one JSON value left
 *                        for the script to put in (events.ts `eventTemplate`)
 */
export function preludeLua(keys: readonly string[]): string {
  const named = keys.map((name, i) => `${name} = KEYS[${i + 1}]`).join(", ");
  return `local KEY = {${named}}
local ARG = cmsgpack.unpack(ARGV[1])
local function reply(kind, fields)
  fields = fields or {}
  fields.kind = kind
  return cmsgpack.pack(fields)
end
local KIND = ${luaTable(LUA_KINDS)}
local MEMBER = ${luaTable(MEMBER_KINDS)}
local function stepJob(run, seq) return '${JOB_ID.step}' .. run .. '${JOB_ID.seq}' .. seq end
local function taskJob(task) return '${JOB_ID.task}' .. task end
local function fill(template, json) return template[1] .. json .. template[2] end
`;
}

function luaTable(table: Record<string, string>): string {
  const fields = Object.entries(table).map(([name, value]) => {
    if (!/^[A-Za-z0-9:_|*-]*$/.test(value)) throw new Error(`not a plain key kind: '${value}'`);
    return `${name} = '${value}'`;
  });
  return `{${fields.join(", ")}}`;
}
