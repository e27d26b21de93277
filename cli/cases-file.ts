import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { State, StateMachineDefinition } from "../engine/core/definition.js";
import { parseCases, type TestCase } from "../engine/testing/cases.js";
import { validateDefinition } from "../schema/index.js";

/**
 * A `stepwise test` file, made ready to run: a case's `definition` may name a
 * definition file (JSON or YAML, relative to the cases file) instead of holding it;
 * every definition is validated, and mocks must name states that exist, so a typo
 * fails the case instead of being silently ignored.
 */
export interface PreparedCase {
  testCase: TestCase;
  /** Why the case cannot run; empty when it can. */
  problems: string[];
}

/** The cases of `file` (only those whose id contains `filter`, when given), prepared. */
export async function loadCasesFile(file: string, filter?: string): Promise<PreparedCase[]> {
  // Filtered before preparing: a definition no selected case names is not validated.
  const cases = parseCases(await readFile(file, "utf8")).filter(
    (tc) => filter === undefined || tc.id.includes(filter),
  );
  const definitions = new Map<string, Promise<LoadedDefinition>>();
  return Promise.all(cases.map((tc) => prepareCase(tc, dirname(file), definitions)));
}

/** A definition read and validated: the definition, or why it cannot run. */
type LoadedDefinition =
  | { definition: StateMachineDefinition; problems?: undefined }
  | { definition?: undefined; problems: string[] };

/**
 * Cases share their definitions (a file names one machine and tests it with many
 * inputs): each distinct definition is read and validated once, not once per case.
 * Validation is pure, so the verdict is the same; bench/cli-start.ts's 60 cases over 3
 * files, validated 60 times, spent a sixth of `stepwise test`'s CPU doing it again.
 */
async function prepareCase(
  tc: TestCase,
  base: string,
  definitions: Map<string, Promise<LoadedDefinition>>,
): Promise<PreparedCase> {
  const source: unknown = tc.definition;
  const key =
    typeof source === "string"
      ? `file:${resolve(base, source)}`
      : `inline:${JSON.stringify(source)}`;
  let loaded = definitions.get(key);
  if (!loaded) {
    loaded = loadDefinition(source, base);
    definitions.set(key, loaded);
  }
  const { definition, problems } = await loaded;
  if (!definition) return { testCase: tc, problems };
  const prepared: TestCase = { ...tc, definition };
  return { testCase: prepared, problems: unknownMockedStates(tc, definition) };
}

async function loadDefinition(source: unknown, base: string): Promise<LoadedDefinition> {
  let text: unknown = source;
  let format: "json" | "yaml" | undefined;
  let where = "definition";
  if (typeof source === "string") {
    const path = resolve(base, source);
    where = source;
    format = /\.ya?ml$/i.test(source) ? "yaml" : "json";
    try {
      text = await readFile(path, "utf8");
    } catch (err) {
      return { problems: [`cannot read definition '${source}': ${message(err)}`] };
    }
  }
  const result = validateDefinition(text, format ? { format } : {});
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (!result.valid || !result.definition) {
    return {
      problems: errors.map(
        (d) =>
          `${where}${d.line !== undefined ? `:${d.line}:${d.column ?? 1}` : ""}: ${d.code} ${d.message} (${d.path || "/"})`,
      ),
    };
  }
  return { definition: result.definition };
}

/** Mocks keyed by names that are no state of the definition (at any depth). */
export function unknownMockedStates(tc: TestCase, definition: StateMachineDefinition): string[] {
  if (tc.mocks === undefined) return [];
  if (typeof tc.mocks !== "object" || tc.mocks === null || Array.isArray(tc.mocks)) {
    return ["mocks must be an object keyed by state name"];
  }
  const names = stateNames(definition);
  return Object.keys(tc.mocks)
    .filter((name) => !names.has(name))
    .map(
      (name) =>
        `mocks name state '${name}', which is not in the definition (its Task states: ${[
          ...taskNames(definition),
        ].join(", ")})`,
    );
}

/** Every state name, nested Map and Parallel states included. */
export function stateNames(definition: StateMachineDefinition): Set<string> {
  const names = new Set<string>();
  visit(definition, (name) => names.add(name));
  return names;
}

function taskNames(definition: StateMachineDefinition): Set<string> {
  const names = new Set<string>();
  visit(definition, (name, state) => {
    if (state.Type === "Task") names.add(name);
  });
  return names;
}

function visit(
  machine: { States: Record<string, State> },
  onState: (name: string, state: State) => void,
): void {
  for (const [name, state] of Object.entries(machine.States)) {
    onState(name, state);
    if (state.Type === "Parallel") for (const branch of state.Branches) visit(branch, onState);
    if (state.Type === "Map") {
      const processor = state.ItemProcessor ?? state.Iterator;
      if (processor) visit(processor, onState);
    }
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
