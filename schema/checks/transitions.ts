import { nearestName } from "../describe.js";
import { diagnostic, listNames, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { objectItems, type Model, type ScopeInfo, type StateInfo } from "./model.js";

/**
 * Transitions and scopes (ASL spec, "Transitions" and "Parallel State"): StartAt and
 * every Next, Default and Catch Next name a state of the same scope; a state that
 * moves on has Next or End but not both; every state is reachable from StartAt;
 * every scope can end. State names are unique in the whole state machine and at
 * most 80 characters (AWS quotas, "State machine name / state name length").
 */
const MAX_STATE_NAME = 80;
const NEEDS_TRANSITION = new Set(["Pass", "Task", "Wait", "Parallel", "Map"]);
const TERMINAL_TYPES = new Set(["Succeed", "Fail"]);

interface Edge {
  target: string;
  /** Where the name is, relative to the state (a pointer is built only for a diagnostic). */
  at: readonly (string | number)[];
  field: string;
}

const AT_NEXT = ["Next"] as const;
const AT_DEFAULT = ["Default"] as const;

export function checkTransitions(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  checkNames(model, out);
  for (const scope of model.scopes) checkScope(model, scope, out);
  return out;
}

function checkNames(model: Model, out: Diagnostic[]): void {
  const firstSeen = new Map<string, StateInfo>();
  for (const state of model.states) {
    if (state.name.length === 0 || state.name.length > MAX_STATE_NAME) {
      out.push(
        diagnostic(
          "INVALID_STATE_NAME",
          `State name '${state.name}' is ${state.name.length} characters long; names need 1 to ${MAX_STATE_NAME}`,
          state.pointer,
        ),
      );
    }
    const first = firstSeen.get(state.name);
    if (first) {
      out.push(
        diagnostic(
          "DUPLICATE_STATE_NAME",
          `State name '${state.name}' is already used at ${first.pointer}; names must be unique in the whole state machine, nested scopes included`,
          state.pointer,
        ),
      );
    } else {
      firstSeen.set(state.name, state);
    }
  }
}

function checkScope(model: Model, scope: ScopeInfo, out: Diagnostic[]): void {
  const startAt = scope.node.StartAt;
  const startOk = typeof startAt === "string" && scope.byName.has(startAt);
  if (typeof startAt === "string" && !startOk) {
    out.push(
      diagnostic(
        "INVALID_START_AT",
        `StartAt '${startAt}' names no state ${scopeWords(scope)}${missingHint(model, scope, startAt, guess(model, scope, startAt))}`,
        child(scope.pointer, "StartAt"),
      ),
    );
  }

  // Where each edge leads. A target that names no state is reported once, here; for
  // the reachability checks below it leads to the state it most likely meant, or,
  // when no name is close, to an unknown state that may well end the execution. So
  // a typo in a Next is not also reported as an unreachable state, a loop with no
  // way out or a scope with no terminal state.
  const edges = new Map<StateInfo, StateInfo[]>();
  const mayEnd = new Set<StateInfo>();
  for (const state of scope.states) {
    const targets: StateInfo[] = [];
    for (const edge of edgesOf(state)) {
      const target = scope.byName.get(edge.target);
      if (target) {
        targets.push(target);
        continue;
      }
      const meant = guess(model, scope, edge.target);
      out.push(
        diagnostic(
          "MISSING_TRANSITION_TARGET",
          `${edge.field} '${edge.target}' names no state ${scopeWords(scope)}${missingHint(model, scope, edge.target, meant)}`,
          child(state.pointer, ...edge.at),
        ),
      );
      if (meant) targets.push(meant);
      else mayEnd.add(state);
    }
    edges.set(state, targets);
    checkNextOrEnd(state, out);
  }

  if (!startOk) return;
  const reachable = reach([scope.byName.get(startAt)!], (s) => edges.get(s) ?? []);
  for (const state of scope.states) {
    if (!reachable.has(state)) {
      out.push(
        diagnostic(
          "UNREACHABLE_STATE",
          `State '${state.name}' is not reachable: no Next, Default or Catch leads to it from StartAt '${startAt}'`,
          state.pointer,
        ),
      );
    }
  }

  const terminals = scope.states.filter(isTerminal);
  if (terminals.length === 0 && mayEnd.size === 0 && scope.states.length > 0) {
    out.push(
      diagnostic(
        "MISSING_END_STATE",
        `${scopeWords(scope, true)} has no terminal state; give a state "End": true or add a Succeed or Fail state`,
        child(scope.pointer, "States"),
      ),
    );
    return;
  }
  // States from which no terminal state can be reached only loop (until an error).
  const predecessors = new Map<StateInfo, StateInfo[]>();
  for (const [from, targets] of edges) {
    for (const to of targets) {
      const list = predecessors.get(to);
      if (list) list.push(from);
      else predecessors.set(to, [from]);
    }
  }
  const canEnd = reach([...terminals, ...mayEnd], (s) => predecessors.get(s) ?? []);
  for (const state of scope.states) {
    if (reachable.has(state) && !canEnd.has(state)) {
      out.push(
        diagnostic(
          "NO_PATH_TO_END",
          `No terminal state can be reached from state '${state.name}'; the execution would loop until an error stops it`,
          state.pointer,
        ),
      );
    }
  }
}

/** Next, Default, Choices[].Next and Catch[].Next of a state. */
function edgesOf(state: StateInfo): Edge[] {
  const edges: Edge[] = [];
  const { node } = state;
  const add = (value: unknown, at: readonly (string | number)[], field: string): void => {
    if (typeof value === "string") edges.push({ target: value, at, field });
  };
  add(node.Next, AT_NEXT, "Next");
  add(node.Default, AT_DEFAULT, "Default");
  for (const [i, rule] of objectItems(node.Choices)) add(rule.Next, ["Choices", i, "Next"], "Next");
  for (const [i, catcher] of objectItems(node.Catch))
    add(catcher.Next, ["Catch", i, "Next"], "Catch Next");
  return edges;
}

function checkNextOrEnd(state: StateInfo, out: Diagnostic[]): void {
  if (state.type === undefined || !NEEDS_TRANSITION.has(state.type)) return;
  const hasNext = state.node.Next !== undefined;
  const ends = state.node.End === true;
  if (hasNext && ends) {
    out.push(
      diagnostic(
        "NEXT_AND_END",
        `State '${state.name}' has both Next and "End": true; keep Next to move on, or End to finish`,
        child(state.pointer, "End"),
      ),
    );
  } else if (!hasNext && !ends) {
    out.push(
      diagnostic(
        "MISSING_NEXT_OR_END",
        `State '${state.name}' (${state.type}) needs "Next": "<state>" or "End": true`,
        state.pointer,
      ),
    );
  }
}

function isTerminal(state: StateInfo): boolean {
  return (state.type !== undefined && TERMINAL_TYPES.has(state.type)) || state.node.End === true;
}

function reach(start: StateInfo[], next: (s: StateInfo) => StateInfo[]): Set<StateInfo> {
  const seen = new Set<StateInfo>(start);
  const queue = [...start];
  for (let s = queue.pop(); s !== undefined; s = queue.pop()) {
    for (const n of next(s)) {
      if (!seen.has(n)) {
        seen.add(n);
        queue.push(n);
      }
    }
  }
  return seen;
}

function scopeWords(scope: ScopeInfo, subject = false): string {
  if (!scope.owner) return subject ? "The state machine" : "at the top level";
  const where = scope.pointer.includes("/Branches/") ? "branch" : "item processor";
  const text = `the ${where} of state '${scope.owner.name}'`;
  return subject ? text.charAt(0).toUpperCase() + text.slice(1) : `in ${text}`;
}

/**
 * What follows "names no state …": where a state of that name is, when it is in
 * another scope, else the name it most likely meant; then the states of the scope.
 */
function missingHint(
  model: Model,
  scope: ScopeInfo,
  name: string,
  meant: StateInfo | undefined,
): string {
  const states = `states here: ${listNames(scope.states.map((s) => s.name))}`;
  const other = model.states.find((s) => s.name === name && s.scope !== scope);
  if (other) {
    const where = other.scope.owner
      ? `a scope of state '${other.scope.owner.name}'`
      : "the top level";
    return ` (a state of that name is in ${where}; transitions cannot cross scopes); ${states}`;
  }
  return meant ? `; did you mean '${meant.name}'? (${states})` : `; ${states}`;
}

/** The state of the scope a missing target most likely meant (none when it is elsewhere). */
function guess(model: Model, scope: ScopeInfo, name: string): StateInfo | undefined {
  if (model.states.some((s) => s.name === name)) return undefined;
  const meant = nearestName(
    name,
    scope.states.map((s) => s.name),
  );
  return meant === undefined ? undefined : scope.byName.get(meant);
}
