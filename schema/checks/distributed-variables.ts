import { isJsonObject, type Json } from "../../engine/core/json.js";
import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { objectItems, type Model, type ScopeInfo, type StateInfo } from "./model.js";

/**
 * Variables and a Distributed Map (AWS "Passing data between states with variables",
 * variable scope): the states of a Parallel branch or an Inline Map iteration read the
 * variables of the scopes around them, but a Distributed Map's child workflows see
 * only their own (AWS's own editor offers them no outer variable: its language
 * service's tests, "Should only see local assigned variables in sub-workflows of
 * distributed map state"). Stepwise runs them so, STANDARD and EXPRESS children alike
 * (engine/flow/join.ts), and the reference fails at run time. AWS accepts such a
 * definition, so this is a warning, given only for a name that states outside the
 * Map assign and none inside it does: pass the value in through `ItemSelector`
 * (or `ItemBatcher.BatchInput`), which the parent evaluates.
 */

/** `$name` in a JSONPath reference or intrinsic argument (not `$.`, `$$`, `$[`). */
const JSONPATH_VARIABLE = /(?<![\w$.'"])\$([A-Za-z_][A-Za-z0-9_]*)/g;
/** `$name` in a JSONata expression, not called (`$string(…)`) and not `$states`. */
const JSONATA_VARIABLE = /(?<![\w$])\$([A-Za-z_][A-Za-z0-9_]*)(?!\s*\()/g;
/** `$name :=`: a name a JSONata expression binds itself. */
const JSONATA_BINDING = /\$([A-Za-z_][A-Za-z0-9_]*)\s*:=/g;
/** Fields of a JSONPath state whose string value is a path. */
const PATH_FIELDS = new Set([
  "InputPath",
  "OutputPath",
  "ResultPath",
  "ItemsPath",
  "Variable",
  "TimeoutSecondsPath",
  "HeartbeatSecondsPath",
  "SecondsPath",
  "TimestampPath",
  "MaxConcurrencyPath",
  "ToleratedFailureCountPath",
  "ToleratedFailurePercentagePath",
  "ErrorPath",
  "CausePath",
]);
/** Fields that hold nested scopes: checked as their own states. */
const SCOPE_FIELDS = new Set(["Branches", "ItemProcessor", "Iterator"]);

export function checkDistributedMapVariables(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const scope of model.scopes) {
    const owner = scope.owner;
    if (!owner || owner.type !== "Map" || !isDistributedProcessor(scope)) continue;
    const inside = statesUnder(model, scope);
    const insideSet = new Set(inside);
    const assignedInside = new Set(inside.flatMap(assignedBy));
    const assignedOutside = new Set(
      model.states.filter((s) => !insideSet.has(s)).flatMap(assignedBy),
    );
    for (const state of inside) {
      const reported = new Set<string>();
      for (const [name, pointer] of references(state)) {
        if (assignedInside.has(name) || !assignedOutside.has(name) || reported.has(name)) continue;
        reported.add(name);
        out.push(
          diagnostic(
            "DISTRIBUTED_MAP_OUTER_VARIABLE",
            `State '${state.name}' reads $${name}, which only states outside the Distributed Map '${owner.name}' assign: its child workflows see only their own variables, so this fails at run time. Pass the value in through the Map's ItemSelector`,
            pointer,
          ),
        );
      }
    }
  }
  return out;
}

function isDistributedProcessor(scope: ScopeInfo): boolean {
  const config = scope.node.ProcessorConfig;
  return isJsonObject(config) && config.Mode === "DISTRIBUTED";
}

/** The states of `scope` and of the scopes nested in it, up to another Distributed Map's. */
function statesUnder(model: Model, scope: ScopeInfo): StateInfo[] {
  const within = (s: ScopeInfo): boolean => {
    for (let at: ScopeInfo | undefined = s; at; at = at.owner?.scope) {
      if (at === scope) return true;
      if (at.owner?.type === "Map" && isDistributedProcessor(at)) return false;
    }
    return false;
  };
  return model.states.filter((state) => within(state.scope));
}

/** The variable names a state assigns (its Assign, its Catchers' and its Choice rules'). */
function assignedBy(state: StateInfo): string[] {
  const names: string[] = [];
  const add = (assign: Json | undefined) => {
    if (isJsonObject(assign)) names.push(...Object.keys(assign).map((k) => k.replace(/\.\$$/, "")));
  };
  add(state.node.Assign);
  for (const list of ["Catch", "Choices"]) {
    for (const [, entry] of objectItems(state.node[list])) add(entry.Assign);
  }
  return names;
}

/** The variables a state's own fields read, with where (nested scopes excluded). */
function references(state: StateInfo): [string, string][] {
  const out: [string, string][] = [];
  const stack: [Json, string, string | undefined][] = [];
  for (const [key, value] of Object.entries(state.node)) {
    if (!SCOPE_FIELDS.has(key)) stack.push([value, child(state.pointer, key), key]);
  }
  const jsonata = state.language === "JSONata";
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [value, pointer, key] = item;
    if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, child(pointer, i), undefined]));
    } else if (isJsonObject(value)) {
      for (const [k, v] of Object.entries(value)) stack.push([v, child(pointer, k), k]);
    } else if (typeof value === "string") {
      for (const name of namesIn(value, key, jsonata)) out.push([name, pointer]);
    }
  }
  return out;
}

function namesIn(text: string, key: string | undefined, jsonata: boolean): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("{%") && trimmed.endsWith("%}")) {
    const bound = new Set([...trimmed.matchAll(JSONATA_BINDING)].map((m) => m[1]!));
    return [...trimmed.matchAll(JSONATA_VARIABLE)]
      .map((m) => m[1]!)
      .filter((name) => name !== "states" && !bound.has(name));
  }
  if (jsonata) return [];
  const dynamic = key !== undefined && (key.endsWith(".$") || PATH_FIELDS.has(key));
  if (!dynamic || (!trimmed.startsWith("$") && !trimmed.startsWith("States."))) return [];
  return [...trimmed.matchAll(JSONPATH_VARIABLE)].map((m) => m[1]!);
}
