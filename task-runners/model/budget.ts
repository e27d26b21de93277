import { isJsonObject, type Json } from "../../engine/core/json.js";

/**
 * Model budgets: limits on what one execution may spend on model calls, over all its
 * runs (Map iterations and Parallel branches included). Pure: the runtime keeps the
 * totals (runtime/commit/usage.ts) and asks `exceededLimit` before each model call, so a call
 * that would go over fails with `Stepwise.BudgetExceeded` before any request is sent.
 */
export interface ModelBudget {
  maxModelCalls?: number;
  maxInputTokens?: number;
  maxOutputTokens?: number;
  maxCostUsd?: number;
}

/** What an execution has spent: answered model calls, their tokens and cost. */
export interface MeteredUsage {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export const BUDGET_EXCEEDED = "Stepwise.BudgetExceeded";

const LIMITS = ["maxModelCalls", "maxInputTokens", "maxOutputTokens", "maxCostUsd"] as const;

/** The budget of a start request or a state machine; throws naming the bad field. */
export function parseBudget(value: Json): ModelBudget {
  if (!isJsonObject(value)) throw new TypeError("budget must be an object");
  const budget: ModelBudget = {};
  for (const [field, limit] of Object.entries(value)) {
    if (!(LIMITS as readonly string[]).includes(field)) {
      throw new TypeError(`budget: unknown field '${field}' (known: ${LIMITS.join(", ")})`);
    }
    const integer = field !== "maxCostUsd";
    if (typeof limit !== "number" || limit < 0 || (integer && !Number.isInteger(limit))) {
      throw new TypeError(
        `budget.${field} must be ${integer ? "an integer" : "a number"} of at least 0`,
      );
    }
    budget[field as (typeof LIMITS)[number]] = limit;
  }
  return budget;
}

/**
 * The limit the next model call would go over, or undefined. Calls are counted
 * ahead (this call + those answered); tokens and cost are only known after the
 * answer, so a call is refused once what was spent has reached the limit.
 */
export function exceededLimit(
  budget: ModelBudget,
  usage: MeteredUsage,
): (typeof LIMITS)[number] | undefined {
  if (budget.maxModelCalls !== undefined && usage.modelCalls + 1 > budget.maxModelCalls)
    return "maxModelCalls";
  if (budget.maxInputTokens !== undefined && usage.inputTokens >= budget.maxInputTokens)
    return "maxInputTokens";
  if (budget.maxOutputTokens !== undefined && usage.outputTokens >= budget.maxOutputTokens)
    return "maxOutputTokens";
  if (budget.maxCostUsd !== undefined && usage.costUsd >= budget.maxCostUsd) return "maxCostUsd";
  return undefined;
}

/** What a model task's normalised output says it spent (one call). */
export function usageOfOutput(output: Json): MeteredUsage | undefined {
  if (!isJsonObject(output) || !isJsonObject(output.usage)) return undefined;
  const { inputTokens, outputTokens } = output.usage;
  const number = (v: Json | undefined) => (typeof v === "number" && v >= 0 ? v : 0);
  return {
    modelCalls: 1,
    inputTokens: number(inputTokens),
    outputTokens: number(outputTokens),
    costUsd: number(output.costUsd),
  };
}
