import type {
  QueryLanguage,
  State,
  StateMachineDefinition,
  StateScope,
} from "./core/definition.js";

/**
 * A definition prepared for execution: every scope (top level, Parallel branch,
 * Map processor) indexed by its JSON pointer, so a run that names its scope finds
 * its states without walking the definition. Built once per definition version.
 */
export interface Program {
  definition: StateMachineDefinition;
  scopes: Map<string, CompiledScope>;
  /** The top-level query language (default for every state). */
  queryLanguage: QueryLanguage;
}

export interface CompiledScope {
  pointer: string;
  startAt: string;
  states: Record<string, State>;
}

function escapePointer(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Pointer of a Parallel state's branch `i` within `scope`. */
export function branchScope(scope: string, stateName: string, index: number): string {
  return `${scope}/States/${escapePointer(stateName)}/Branches/${index}`;
}

/** Pointer of a Map state's processor within `scope` (`ItemProcessor` or legacy `Iterator`). */
export function processorScope(scope: string, stateName: string, legacy: boolean): string {
  return `${scope}/States/${escapePointer(stateName)}/${legacy ? "Iterator" : "ItemProcessor"}`;
}

export function compileProgram(definition: StateMachineDefinition): Program {
  const scopes = new Map<string, CompiledScope>();
  const visit = (pointer: string, scope: StateScope): void => {
    scopes.set(pointer, { pointer, startAt: scope.StartAt, states: scope.States });
    for (const [name, state] of Object.entries(scope.States)) {
      if (state.Type === "Parallel") {
        state.Branches.forEach((branch, i) => visit(branchScope(pointer, name, i), branch));
      } else if (state.Type === "Map") {
        const processor = state.ItemProcessor ?? state.Iterator;
        if (processor) visit(processorScope(pointer, name, !state.ItemProcessor), processor);
      }
    }
  };
  visit("", definition);
  return { definition, scopes, queryLanguage: definition.QueryLanguage ?? "JSONPath" };
}

export function scopeOf(program: Program, pointer: string): CompiledScope {
  const scope = program.scopes.get(pointer);
  if (!scope) throw new Error(`unknown scope '${pointer}' in program`);
  return scope;
}

export function queryLanguageOf(program: Program, state: State): QueryLanguage {
  return state.QueryLanguage ?? program.queryLanguage;
}
