import type { QueryLanguage } from "../../engine/core/definition.js";
import { isJsonObject, type Json, type JsonObject } from "../../engine/core/json.js";
import { child } from "../pointer.js";

/**
 * The definition seen as scopes and states, built once for all semantic checks.
 * Built defensively: the checks run even when the schema found problems, so any
 * field may be missing or of the wrong type here.
 *
 * Query language (AWS "Transforming data with JSONata"): a state uses its own
 * `QueryLanguage`, else its scope's. A scope (a Parallel branch or a Map processor)
 * inherits the language of the state that holds it, the top level's is the
 * definition's `QueryLanguage`, and the default is JSONPath.
 */
export interface ScopeInfo {
  /** "" for the top level, "/States/P/Branches/0", "/States/M/ItemProcessor", … */
  pointer: string;
  node: JsonObject;
  states: StateInfo[];
  byName: Map<string, StateInfo>;
  language: QueryLanguage;
  /** The Parallel or Map state that holds this scope. */
  owner?: StateInfo;
}

export interface StateInfo {
  name: string;
  /** The state object; non-objects are represented by an empty object. */
  node: JsonObject;
  type: string | undefined;
  pointer: string;
  scope: ScopeInfo;
  language: QueryLanguage;
}

export interface Model {
  root: JsonObject;
  /** The definition's own QueryLanguage (default JSONPath). */
  topLanguage: QueryLanguage;
  scopes: ScopeInfo[];
  states: StateInfo[];
  /** "STANDARD" or "EXPRESS": what the state machine will be created as. */
  machineType: MachineType;
}

export type MachineType = "STANDARD" | "EXPRESS";

export function buildModel(root: JsonObject, machineType: MachineType = "STANDARD"): Model {
  const topLanguage = languageOf(root.QueryLanguage) ?? "JSONPath";
  const model: Model = { root, topLanguage, scopes: [], states: [], machineType };
  const pending: {
    node: JsonObject;
    pointer: string;
    language: QueryLanguage;
    owner?: StateInfo;
  }[] = [{ node: root, pointer: "", language: topLanguage }];
  // Breadth-first with an explicit queue; nesting was bounded when the source was read.
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    const scope: ScopeInfo = {
      pointer: next.pointer,
      node: next.node,
      states: [],
      byName: new Map(),
      language:
        next.pointer === ""
          ? next.language
          : (languageOf(next.node.QueryLanguage) ?? next.language),
      ...(next.owner ? { owner: next.owner } : {}),
    };
    model.scopes.push(scope);
    const states = next.node.States;
    if (!isJsonObject(states)) continue;
    for (const [name, value] of Object.entries(states)) {
      const node = isJsonObject(value) ? value : {};
      const state: StateInfo = {
        name,
        node,
        type: typeof node.Type === "string" ? node.Type : undefined,
        pointer: child(next.pointer, "States", name),
        scope,
        language: languageOf(node.QueryLanguage) ?? scope.language,
      };
      scope.states.push(state);
      scope.byName.set(name, state);
      model.states.push(state);
      for (const [field, inner] of childScopes(node)) {
        pending.push({
          node: inner,
          pointer: child(state.pointer, ...field),
          language: state.language,
          owner: state,
        });
      }
    }
  }
  return model;
}

/** The scopes a state holds: Parallel branches, a Map ItemProcessor or Iterator. */
function childScopes(state: JsonObject): [(string | number)[], JsonObject][] {
  const out: [(string | number)[], JsonObject][] = [];
  if (Array.isArray(state.Branches)) {
    state.Branches.forEach((branch, i) => {
      if (isJsonObject(branch)) out.push([["Branches", i], branch]);
    });
  }
  for (const field of ["ItemProcessor", "Iterator"]) {
    const processor = state[field];
    if (isJsonObject(processor)) out.push([[field], processor]);
  }
  return out;
}

export function languageOf(value: Json | undefined): QueryLanguage | undefined {
  return value === "JSONPath" || value === "JSONata" ? value : undefined;
}

/** The entries of an array field that are objects, with their indexes. */
export function objectItems(value: Json | undefined): [number, JsonObject][] {
  if (!Array.isArray(value)) return [];
  const out: [number, JsonObject][] = [];
  value.forEach((item, i) => {
    if (isJsonObject(item)) out.push([i, item]);
  });
  return out;
}

/** The value at a path of keys inside a state, if every step is an object. */
export function fieldAt(node: Json, path: readonly string[]): Json | undefined {
  let value: Json | undefined = node;
  for (const key of path) {
    if (!isJsonObject(value)) return undefined;
    value = value[key];
  }
  return value;
}
