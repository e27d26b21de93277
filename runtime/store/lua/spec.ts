import { scriptLua } from "./prelude.js";

/** What a script answers: a map whose `kind` names the reply (wire.ts). */
export interface Reply {
  kind: string;
}

/**
 * A Lua script run with EVALSHA (ioredis falls back to EVAL after a Redis restart
 * empties the script cache), typed at the seam: `Keys` names its KEYS (Redis
 * needs them listed, for a cluster to check they share a slot), `Args` is the
 * one map it takes, `R` the union of its replies.
 */
export interface Script<Keys extends string, Args, R extends Reply> {
  /** verb + object, as BullMQ names its scripts. */
  readonly name: string;
  /** The KEYS, in order: Lua reads them by name from `KEY`. */
  readonly keys: readonly Keys[];
  /** Every `kind` it may reply: a reply of another kind is a bug, and throws. */
  readonly replies: readonly R["kind"][];
  /** The whole source: the prelude, the script's helpers and body, and the entry that runs it per call (prelude.ts). */
  readonly lua: string;
  /** Type only: never set. */
  readonly args?: Args;
}

/** Any script, for lists of them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyScript = Script<string, any, Reply>;

/**
 * Defines a script: `defineScript<Args, Reply>()({ name, keys, replies, helpers, lua })`
 * (curried so that the key names are inferred while Args and Reply are given).
 * The body sees `KEY.<name>`, `ARG.<field>` and `reply(kind, fields)`, and the
 * names of prelude.ts.
 */
export function defineScript<Args, R extends Reply>() {
  return <const Keys extends string>(spec: {
    name: string;
    keys: readonly Keys[];
    replies: readonly R["kind"][];
    /** Lua helpers (`…_LUA`) the body calls; they read neither KEY nor ARG. */
    helpers?: readonly string[];
    lua: string;
  }): Script<Keys, Args, R> => ({
    name: spec.name,
    keys: spec.keys,
    replies: spec.replies,
    lua: scriptLua(spec.keys, spec.lua, (spec.helpers ?? []).join("")),
  });
}
