import { choiceLabel } from "./choice-label.js";

/**
 * A definition as a graph: one node per state, nested scopes for Parallel branches
 * and Map processors (ItemProcessor, or the legacy Iterator), and edges for Next,
 * Choice rules, Default and Catch. Pure and DOM-free: layout and rendering take it
 * from here, and tests check it directly.
 *
 * Each scope also gets a start and an end marker (as the AWS console draws them):
 * they are not states, so they carry no state name.
 */

export type EdgeKind = "next" | "choice" | "default" | "catch" | "start" | "end";

export interface GraphEdge {
  from: string;
  to: string;
  kind: EdgeKind;
  /** Choice rule (`$.x > 3`), "Default", or the Catch's ErrorEquals. */
  label?: string;
}

export interface GraphNode {
  /** Unique in the whole graph: the scope's id and the state name. */
  id: string;
  /** The state name (state names are unique per scope, and AWS wants them unique overall). */
  name: string;
  type: string;
  /** Parallel: one scope per branch; Map: its processor. */
  scopes: GraphScope[];
  /** The state's Retry, in words ("States.ALL ×3, backoff 2"), when it has one. */
  retry?: string;
}

export interface GraphScope {
  id: string;
  /** "Branch 1", "Item processor" … for nested scopes. */
  label: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Ids of the start and end markers. */
  startId: string;
  endId: string;
}

type StateDef = Record<string, unknown>;

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function nestedScopes(state: StateDef): { def: unknown; label: string }[] {
  if (state.Type === "Parallel" && Array.isArray(state.Branches)) {
    return state.Branches.map((def, i) => ({ def, label: `Branch ${i + 1}` }));
  }
  if (state.Type === "Map") {
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor !== undefined) return [{ def: processor, label: "Item processor" }];
  }
  return [];
}

/** A state's Retry rules in words: each rule's errors and attempts. */
export function retryLabel(state: StateDef): string | undefined {
  const rules = Array.isArray(state.Retry) ? state.Retry : [];
  if (rules.length === 0) return undefined;
  return rules
    .map((raw) => {
      const r = record(raw);
      const attempts = typeof r.MaxAttempts === "number" ? r.MaxAttempts : 3;
      const backoff = typeof r.BackoffRate === "number" ? `, backoff ${r.BackoffRate}` : "";
      return `${errorLabel(r).replace(/^Catch$/, "?")} ×${attempts}${backoff}`;
    })
    .join("; ");
}

function errorLabel(catcher: Record<string, unknown>): string {
  const errors = Array.isArray(catcher.ErrorEquals) ? catcher.ErrorEquals : [];
  return errors.map(String).join(", ") || "Catch";
}

/** The edges leaving one state. */
function edgesOf(
  state: StateDef,
  from: string,
  idOf: (name: string) => string,
  endId: string,
): GraphEdge[] {
  const edges: GraphEdge[] = [];
  const to = (name: unknown) => idOf(String(name));
  if (state.Type === "Choice") {
    const choices = Array.isArray(state.Choices) ? state.Choices : [];
    for (const rule of choices) {
      const next = record(rule).Next;
      if (next !== undefined) {
        edges.push({ from, to: to(next), kind: "choice", label: choiceLabel(rule) });
      }
    }
    if (state.Default !== undefined) {
      edges.push({ from, to: to(state.Default), kind: "default", label: "Default" });
    }
  } else if (state.Type === "Succeed" || state.Type === "Fail" || state.End === true) {
    edges.push({ from, to: endId, kind: "end" });
  } else if (state.Next !== undefined) {
    edges.push({ from, to: to(state.Next), kind: "next" });
  }
  const catchers = Array.isArray(state.Catch) ? state.Catch : [];
  for (const catcher of catchers) {
    const c = record(catcher);
    if (c.Next !== undefined) {
      edges.push({ from, to: to(c.Next), kind: "catch", label: errorLabel(c) });
    }
  }
  return edges;
}

function buildScope(def: unknown, id: string, label: string): GraphScope {
  const scope = record(def);
  const states = record(scope.States);
  const startId = `${id}/^start`;
  const endId = `${id}/^end`;
  const idOf = (name: string) => `${id}/${name}`;
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  if (typeof scope.StartAt === "string") {
    edges.push({ from: startId, to: idOf(scope.StartAt), kind: "start" });
  }
  for (const [name, raw] of Object.entries(states)) {
    const state = record(raw);
    const nodeId = idOf(name);
    const retry = retryLabel(state);
    nodes.push({
      id: nodeId,
      name,
      type: typeof state.Type === "string" ? state.Type : "?",
      scopes: nestedScopes(state).map((s, i) => buildScope(s.def, `${nodeId}/${i}`, s.label)),
      ...(retry !== undefined ? { retry } : {}),
    });
    edges.push(...edgesOf(state, nodeId, idOf, endId));
  }
  // A transition to a name the scope lacks would make the layout invent a node;
  // the API validates definitions, but a console must draw whatever it is given.
  const known = new Set([startId, endId, ...nodes.map((n) => n.id)]);
  return { id, label, nodes, edges: edges.filter((e) => known.has(e.to)), startId, endId };
}

export function definitionGraph(definition: unknown): GraphScope {
  return buildScope(definition, "", "");
}

/** Every state node, nested ones included (depth first). */
export function allNodes(scope: GraphScope): GraphNode[] {
  return scope.nodes.flatMap((node) => [node, ...node.scopes.flatMap(allNodes)]);
}
