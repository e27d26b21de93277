import type { Keys } from "../../runtime/store/keys.js";
import type { CommitArgs, CommitOp } from "../../runtime/store/scripts/commit-transition.js";

/** The inbox head the fixtures' runs hold and their commits consume. */
export const HEAD = '{"type":"Continue"}';

/**
 * The argument of a commit of `run` at `seq` that appends no history, on a record
 * whose chain head is "g" (what the tests' set-up writes), with `ops` and any
 * field overridden.
 */
export function commitArgs(
  keys: Keys,
  run: string,
  ops: CommitOp[],
  overrides: Partial<CommitArgs> = {},
): CommitArgs {
  return {
    base: keys.base,
    run,
    seq: 0,
    head: HEAD,
    state: '{"s":1}',
    journal: ['{"j":1}'],
    events: [],
    historyCount: 0,
    historyHead: "g",
    newHistoryHead: "",
    now: 1_000,
    leaseMs: 500,
    tombstoneSeconds: 60,
    ops,
    ...overrides,
  };
}
