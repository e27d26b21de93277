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
  /**
   * Per Parallel or Map state of this scope, where its children run. Computed here
   * so that no step builds pointers.
   */
  children: Map<string, ChildScopes>;
  /** For a Map processor: the Map state's name (its iteration events carry it). */
  owner?: string;
}

/** Parallel branch i runs `scopes[i]`; every Map iteration runs `scopes[0]`. */
export interface ChildScopes {
  scopes: readonly string[];
  /** Map iterations (numbered, with MapIteration… events) rather than Parallel branches. */
  iterations: boolean;
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
  const visit = (pointer: string, scope: StateScope, owner?: string): void => {
    const children = new Map<string, ChildScopes>();
    const compiled: CompiledScope = {
      pointer,
      startAt: scope.StartAt,
      states: scope.States,
      children,
    };
    if (owner !== undefined) compiled.owner = owner;
    scopes.set(pointer, compiled);
    for (const [name, state] of Object.entries(scope.States)) {
      if (state.Type === "Parallel") {
        const branches = state.Branches.map((_, i) => branchScope(pointer, name, i));
        children.set(name, { scopes: branches, iterations: false });
        state.Branches.forEach((branch, i) => visit(branches[i]!, branch));
      } else if (state.Type === "Map") {
        const processor = state.ItemProcessor ?? state.Iterator;
        if (!processor) continue;
        const child = processorScope(pointer, name, !state.ItemProcessor);
        children.set(name, { scopes: [child], iterations: true });
        visit(child, processor, name);
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
