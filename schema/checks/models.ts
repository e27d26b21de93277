import { isJsonObject, type Json } from "../../engine/core/json.js";
import { MODEL_ERRORS } from "../../task-runners/model/errors.js";
import { MODEL_ARGUMENTS, MODEL_RESOURCES, URL_PATTERN } from "../../task-runners/model/fields.js";
import { BUDGET_EXCEEDED } from "../../task-runners/model/budget.js";
import { closest } from "../describe.js";
import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { objectItems, type Model } from "./model.js";

/**
 * Model tasks (`stepwise:model`, task-runners/model/): what the runner would refuse
 * with States.Runtime whatever the provider says, found before the state runs when the
 * value is static (a JSONPath field without `.$`, a JSONata value that is not a
 * `{% … %}` expression); and error names under `Model.` that no model task raises, a
 * Retry that could never match (`Model.RateLimit` for `Model.RateLimited`).
 */
const ARGUMENTS: readonly string[] = MODEL_ARGUMENTS;
const ERRORS: readonly string[] = [...Object.values(MODEL_ERRORS), BUDGET_EXCEEDED];

function isExpression(value: Json | undefined): boolean {
  return typeof value === "string" && /^\{%[\s\S]*%\}$/.test(value.trim());
}

function bare(resource: string): string {
  return resource.replace(/\.(waitForTaskToken|sync(:2)?)$/, "");
}

export function checkModelTasks(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    const { node, pointer } = state;
    if (state.type !== "Task" || typeof node.Resource !== "string") continue;
    if (!MODEL_RESOURCES.has(bare(node.Resource))) continue;
    const key = state.language === "JSONata" ? "Arguments" : "Parameters";
    const args = node[key];
    if (args === undefined) {
      out.push(
        diagnostic(
          "INVALID_MODEL_ARGUMENT",
          `A model task needs ${key} with at least 'Messages'`,
          child(pointer, "Resource"),
        ),
      );
      continue;
    }
    if (!isJsonObject(args)) continue; // an expression: known only at run time
    const at = child(pointer, key);
    const given = new Set<string>();
    for (const [raw, value] of Object.entries(args)) {
      const dynamic = raw.endsWith(".$") || isExpression(value);
      const field = raw.endsWith(".$") ? raw.slice(0, -2) : raw;
      given.add(field);
      if (!ARGUMENTS.includes(field)) {
        const near = closest(field, ARGUMENTS);
        out.push(
          diagnostic(
            "INVALID_MODEL_ARGUMENT",
            `'${field}' is not a model task argument${near ? ` (did you mean '${near}'?)` : ""}; the arguments are ${ARGUMENTS.join(", ")}`,
            child(at, raw),
          ),
        );
        continue;
      }
      if (dynamic) continue;
      const why = problem(field, value);
      if (why) out.push(diagnostic("INVALID_MODEL_ARGUMENT", `'${field}' ${why}`, child(at, raw)));
    }
    if (!given.has("Messages")) {
      out.push(
        diagnostic("INVALID_MODEL_ARGUMENT", "'Messages' is required: the conversation so far", at),
      );
    }
  }
  out.push(...unknownModelErrors(model));
  return out;
}

function problem(field: string, value: Json): string | undefined {
  switch (field) {
    case "Endpoint":
      if (typeof value !== "string") return "must be a string";
      return URL_PATTERN.test(value)
        ? "names an endpoint of STEPWISE_MODEL_ENDPOINTS, not a URL: keys and URLs stay in the workers' configuration"
        : undefined;
    case "Messages":
      return Array.isArray(value) && value.length > 0 ? undefined : "must be a non-empty array";
    case "Tools":
      return Array.isArray(value) ? undefined : "must be an array";
    case "Model":
      return typeof value === "string" && value !== "" ? undefined : "must be a non-empty string";
    case "Temperature":
      return typeof value === "number" ? undefined : "must be a number";
    case "MaxTokens":
      return Number.isInteger(value) && (value as number) >= 1
        ? undefined
        : "must be a positive integer";
    default:
      return undefined;
  }
}

function unknownModelErrors(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    for (const field of ["Retry", "Catch"] as const) {
      for (const [i, entry] of objectItems(state.node[field])) {
        const names = Array.isArray(entry.ErrorEquals) ? entry.ErrorEquals : [];
        names.forEach((name, k) => {
          if (typeof name !== "string" || ERRORS.includes(name)) return;
          if (!name.startsWith("Model.")) return;
          const near = closest(name, ERRORS);
          out.push(
            diagnostic(
              "UNKNOWN_MODEL_ERROR",
              `No model task fails with '${name}'${near ? ` (did you mean '${near}'?)` : ""}; they fail with ${ERRORS.join(", ")}`,
              child(state.pointer, field, i, "ErrorEquals", k),
            ),
          );
        });
      }
    }
  }
  return out;
}
