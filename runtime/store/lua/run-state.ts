/**
 * Lua helpers shared by the scripts that write or read a run's state.
 *
 * A run hash holds `RUN.seq`, `RUN.followUps` (last follow-ups) and the state
 * (fields.ts `RUN_FIELDS`). Redis keeps a hash in its compact listpack encoding
 * only while every value is at most `hash-max-listpack-value` bytes (64 by
 * default); one state value of a few hundred bytes would turn the whole hash
 * into a hashtable, about 200 bytes more per run. So the (packed, see
 * runtime/store/codec.ts) state is stored in 64-byte slices `RUN.state .. 1` ..
 * `RUN.state .. N` with `RUN.stateSlices` = N. Past 120 slices (~7.5 KB packed)
 * the hash would become a hashtable anyway (`hash-max-listpack-entries`), so a
 * large state goes into the one field `RUN.state` with `RUN.stateSlices` = 0:
 * writing thousands of slices per transition of a big Map's parent would cost
 * far more than it saves.
 *
 * A large input of the run's current state is kept apart, in `RUN.input` (with
 * its version `RUN.inputVersion`), and left out of the state
 * (runtime/payloads/frame-input.ts): it is written when the run enters a state, not
 * again at each of its transitions there.
 */
/** Slices a load reads with the run's other fields (512 bytes packed: most states). */
const STATE_READ = 8;

export const RUN_STATE_LUA = `
-- putState(key, state, old, extra): writes the state, with the fields of
-- \`extra\` ({field, value, ...}, optional) in the same HSET. \`old\`: the run's
-- RUN.stateSlices as the caller read it (false: none stored yet); nil: read here.
local function putState(key, state, old, extra)
  if old == nil then old = redis.call('HGET', key, RUN.stateSlices) end
  old = tonumber(old or '0')
  local args = extra or {}
  if #state > 64 * 120 then
    -- Past hash-max-listpack-entries the hash is a hashtable anyway: one field is cheaper.
    args[#args + 1] = RUN.stateSlices; args[#args + 1] = 0
    args[#args + 1] = RUN.state; args[#args + 1] = state
    redis.call('HSET', key, unpack(args))
    for i = 1, old do redis.call('HDEL', key, RUN.state .. i) end
    return
  end
  local n = math.max(1, math.ceil(#state / 64))
  args[#args + 1] = RUN.stateSlices
  args[#args + 1] = n
  for i = 1, n do
    args[#args + 1] = RUN.state .. i
    args[#args + 1] = string.sub(state, (i - 1) * 64 + 1, i * 64)
  end
  redis.call('HSET', key, unpack(args))
  for i = n + 1, old do redis.call('HDEL', key, RUN.state .. i) end
  if old == 0 then redis.call('HDEL', key, RUN.state) end
end
-- What a load reads of the run hash at once, by name: its seq, follow-ups, input
-- version and state, and the first STATE_READ slices as slice1.. (RUN_LOADED is
-- RUN with those): with them, a state of up to STATE_READ slices needs no second read.
local STATE_READ = ${STATE_READ}
local RUN_READ = {'seq', 'followUps', 'inputVersion', 'stateSlices', 'state', 'historyOwner'}
local RUN_LOADED = {}
for name, field in pairs(RUN) do RUN_LOADED[name] = field end
for i = 1, STATE_READ do
  RUN_LOADED['slice' .. i] = RUN.state .. i
  RUN_READ[#RUN_READ + 1] = 'slice' .. i
end
-- readRun(key): the run's RUN_READ fields by name (\`seq\` false: no such run).
local function readRun(key) return hmgetNamed(key, RUN_LOADED, RUN_READ) end
-- The state of a run read with readRun: the slices past the first STATE_READ are read now.
local function stateOf(key, run)
  local n = tonumber(run.stateSlices or '0')
  -- 0: one field, as large states are kept.
  if n == 0 then return run.state end
  local parts = {}
  for i = 1, math.min(n, STATE_READ) do parts[i] = run['slice' .. i] end
  if n > STATE_READ then
    local fields = {}
    for i = STATE_READ + 1, n do fields[#fields + 1] = RUN.state .. i end
    local rest = redis.call('HMGET', key, unpack(fields))
    for i = 1, #rest do parts[#parts + 1] = rest[i] end
  end
  return table.concat(parts)
end
`;
