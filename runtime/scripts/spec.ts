/** A Lua script run with EVALSHA (ioredis falls back to EVAL after a Redis restart empties the script cache). */
export interface ScriptSpec {
  /** verb + object, as BullMQ names its scripts. */
  name: string;
  /** How many of the arguments are KEYS. */
  keys: number;
  lua: string;
}
