import {
  exceededLimit,
  parseBudget,
  type MeteredUsage,
  type ModelBudget,
} from "../../task-runners/model/budget.js";
import type { Json } from "../../engine/core/json.js";
import type { CommitOp } from "../store/scripts/commit-transition.js";
import { EXECUTION_FIELDS } from "../store/fields.js";

/**
 * Where an execution keeps its model budget and what it spent: fields of the execution
 * hash, shared by all its runs (Map iterations and Parallel branches live in its
 * shard and write the same hash). The totals grow with HINCRBYFLOAT in the commit
 * that consumes the model task's result (`usage` op of commitTransition), so they
 * are exactly what the history has committed, crash or not.
 */
export const BUDGET_FIELD = EXECUTION_FIELDS.budget;
export const USAGE_FIELDS: Readonly<Record<keyof MeteredUsage, string>> = {
  modelCalls: EXECUTION_FIELDS.modelCalls,
  inputTokens: EXECUTION_FIELDS.inputTokens,
  outputTokens: EXECUTION_FIELDS.outputTokens,
  costUsd: EXECUTION_FIELDS.costUsd,
};
const ORDER = ["modelCalls", "inputTokens", "outputTokens", "costUsd"] as const;

/** The `usage` ops of a commit: field and amount for each non-zero part. */
export function usageOps(usage: MeteredUsage): CommitOp[] {
  const ops: CommitOp[] = [];
  for (const part of ORDER) {
    if (usage[part] > 0)
      ops.push({ op: "usage", field: USAGE_FIELDS[part], amount: String(usage[part]) });
  }
  return ops;
}

/** The fields to HMGET for `readUsage`: the budget, then the totals. */
export const BUDGET_AND_USAGE_FIELDS = [BUDGET_FIELD, ...ORDER.map((p) => USAGE_FIELDS[p])];

/** The totals from the hash's fields (absent = 0), the cost to the nano-dollar (HINCRBYFLOAT drifts). */
export function readUsage(
  fields: Readonly<Record<string, string | null | undefined>>,
): MeteredUsage {
  const n = (f: string) => Number(fields[f] ?? 0) || 0;
  return {
    modelCalls: n(USAGE_FIELDS.modelCalls),
    inputTokens: n(USAGE_FIELDS.inputTokens),
    outputTokens: n(USAGE_FIELDS.outputTokens),
    costUsd: Math.round(n(USAGE_FIELDS.costUsd) * 1e9) / 1e9,
  };
}

export function readBudget(text: string | null | undefined): ModelBudget | undefined {
  if (!text) return undefined;
  return parseBudget(JSON.parse(text) as Json);
}

/** Whether the execution's budget lets one more model call go: the limit it would exceed, else undefined. */
export function budgetCheck(
  values: readonly (string | null)[],
): { limit: string; budget: ModelBudget; usage: MeteredUsage } | undefined {
  const budget = readBudget(values[0]);
  if (!budget) return undefined;
  const fields: Record<string, string | null | undefined> = {};
  BUDGET_AND_USAGE_FIELDS.forEach((f, i) => (fields[f] = values[i]));
  const usage = readUsage(fields);
  const limit = exceededLimit(budget, usage);
  return limit ? { limit, budget, usage } : undefined;
}
