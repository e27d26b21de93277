/**
 * The inputs a Map's join kept in Redis for its later children (`keepInputs`, the
 * join's `ji:` hash), as this process committed them, so that the commit starting a
 * later child (`spawnKept`) can hand the child to this worker as it wrote it,
 * Started event included, and the child's first transition needs no load
 * (fenced-commit.ts `spawnedRuns`). A hint only: the child's commit is fenced by its
 * inbox head, so an input that is not the one Redis filled in costs a load, never
 * a wrong step. Bounded: the most recent joins, each at most a Map's input (256 KiB).
 */
const MAX_JOINS = 64;

interface Kept {
  from: number;
  inputs: (string | undefined)[];
  left: number;
}

const joins = new Map<string, Kept>();

/** A commit kept `inputs` for the children `from`, `from + 1`… of `join` (short prefix). */
export function rememberInputs(join: string, from: number, inputs: readonly string[]): void {
  const kept = joins.get(join);
  if (kept && kept.from + kept.inputs.length === from) {
    for (const input of inputs) kept.inputs.push(input);
    kept.left += inputs.length;
    return;
  }
  joins.delete(join);
  joins.set(join, { from, inputs: [...inputs], left: inputs.length });
  if (joins.size > MAX_JOINS) {
    const oldest = joins.keys().next();
    if (!oldest.done) joins.delete(oldest.value);
  }
}

/** The input kept for child `index` of `join`, once (the join's entry goes with its last). */
export function takeInput(join: string, index: number): string | undefined {
  const kept = joins.get(join);
  if (!kept) return undefined;
  const at = index - kept.from;
  const input = kept.inputs[at];
  if (input === undefined) return undefined;
  kept.inputs[at] = undefined;
  if (--kept.left === 0) joins.delete(join);
  return input;
}
