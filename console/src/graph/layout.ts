import { graphlib, layout as dagreLayout } from "@dagrejs/dagre";
import { shorten } from "./choice-label.js";
import type { EdgeKind, GraphScope } from "./model.js";

/**
 * Places a graph model with dagre, one scope at a time from the innermost out: a
 * Parallel or Map node is sized to hold its laid-out branches side by side, then
 * laid out as an ordinary node of its own scope. (dagre's compound mode cannot
 * route edges to a cluster, and every Next into a Parallel is such an edge.)
 * Coordinates in the result are absolute, in SVG user units.
 */

export interface Point {
  x: number;
  y: number;
}

export interface LaidState {
  id: string;
  name: string;
  type: string;
  /** Top-left corner and size. */
  x: number;
  y: number;
  width: number;
  height: number;
  /** A Parallel or Map drawn as a box around its scopes. */
  compound: boolean;
  /** Its Retry in words, when it has one. */
  retry?: string;
}

export interface LaidScope {
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LaidMarker {
  id: string;
  kind: "start" | "end";
  x: number;
  y: number;
}

export interface LaidEdge {
  from: string;
  to: string;
  kind: EdgeKind;
  label?: string;
  /** The label as drawn (shortened); `label` has it in full. */
  shortLabel?: string;
  /** The label as drawn: wrapped on lines (long ones end in "…"; the tooltip has it whole). */
  labelLines?: string[];
  points: Point[];
  labelAt?: Point;
}

export interface Layout {
  width: number;
  height: number;
  states: LaidState[];
  scopes: LaidScope[];
  markers: LaidMarker[];
  edges: LaidEdge[];
}

const CHAR = 7.4; // px per character of a state name (13px sans), a safe over-estimate
const TYPE_CHAR = 6; // of its type (10px)
const LABEL_CHAR = 6.4; // edge labels (11px)
const NODE_HEIGHT = 38;
const MARKER = 14;
const HEADER = 26; // a compound node's title
const PAD = 12;
const GAP = 14; // between a Parallel's branches
const SCOPE_LABEL = 14; // "Branch 1" above a branch's start marker
export const MARGIN = 16;
const LABEL_LINE = 14; // an edge label's line height
const LABEL_WIDTH = 26; // characters per line of an edge label
const LABEL_MAX_LINES = 4;

/** An edge label on lines of at most `width` characters, broken after ", " or spaces. */
export function wrapLabel(text: string, width = LABEL_WIDTH, max = LABEL_MAX_LINES): string[] {
  const words = text.split(/(?<=,) |(?<= )(?=\S)/);
  const lines: string[] = [];
  let line = "";
  for (const word of words) {
    if (line !== "" && (line + word).trimEnd().length > width) {
      lines.push(line.trimEnd());
      line = "";
    }
    line += word;
    while (line.length > width) {
      lines.push(line.slice(0, width));
      line = line.slice(width);
    }
  }
  if (line.trim() !== "") lines.push(line.trimEnd());
  if (lines.length > max) {
    const kept = lines.slice(0, max);
    kept[max - 1] = shorten(`${kept[max - 1]} ${lines[max]}`, width);
    return kept;
  }
  return lines;
}

/** Wide enough for "Name Type", capped so that one long name cannot widen a whole scope. */
function leafWidth(name: string, type: string): number {
  return Math.min(
    280,
    Math.max(110, Math.round(name.length * CHAR + type.length * TYPE_CHAR + 36)),
  );
}

/** A scope laid out in its own coordinates (origin at its top-left). */
function layoutScope(scope: GraphScope): Layout {
  const inner = new Map<string, { layouts: Layout[]; width: number; height: number }>();
  for (const node of scope.nodes) {
    if (node.scopes.length === 0) continue;
    const layouts = node.scopes.map(layoutScope);
    const width =
      Math.max(
        leafWidth(node.name, node.type),
        layouts.reduce((sum, l) => sum + l.width, 0) + GAP * (layouts.length - 1),
      ) +
      2 * PAD;
    const height = Math.max(...layouts.map((l) => l.height)) + SCOPE_LABEL + HEADER + PAD;
    inner.set(node.id, { layouts, width, height });
  }

  const g = new graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 34, edgesep: 12, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  g.setNode(scope.startId, { width: MARKER, height: MARKER });
  g.setNode(scope.endId, { width: MARKER, height: MARKER });
  for (const node of scope.nodes) {
    const box = inner.get(node.id);
    g.setNode(node.id, box ?? { width: leafWidth(node.name, node.type), height: NODE_HEIGHT });
  }
  scope.edges.forEach((edge, i) => {
    const lines = edge.label === undefined ? undefined : wrapLabel(edge.label);
    g.setEdge(
      edge.from,
      edge.to,
      lines === undefined
        ? { minlen: 1 }
        : {
            minlen: 1,
            width: Math.max(...lines.map((l) => l.length)) * LABEL_CHAR + 8,
            height: lines.length * LABEL_LINE + 4,
            labelpos: "c",
          },
      String(i),
    );
  });
  dagreLayout(g);

  const out: Layout = { width: 0, height: 0, states: [], scopes: [], markers: [], edges: [] };
  const graph = g.graph();
  out.width = graph.width ?? 0;
  out.height = graph.height ?? 0;
  for (const [id, kind] of [
    [scope.startId, "start"],
    [scope.endId, "end"],
  ] as const) {
    const n = g.node(id);
    if (n?.x !== undefined && n.y !== undefined) out.markers.push({ id, kind, x: n.x, y: n.y });
  }
  for (const node of scope.nodes) {
    const n = g.node(node.id);
    const x = (n.x ?? 0) - n.width / 2;
    const y = (n.y ?? 0) - n.height / 2;
    const box = inner.get(node.id);
    out.states.push({
      id: node.id,
      name: node.name,
      type: node.type,
      x,
      y,
      width: n.width,
      height: n.height,
      compound: box !== undefined,
      ...(node.retry !== undefined ? { retry: node.retry } : {}),
    });
    if (!box) continue;
    // The branches side by side, centred in the box under its title.
    const used = box.layouts.reduce((s, l) => s + l.width, 0) + GAP * (box.layouts.length - 1);
    let left = x + (n.width - used) / 2;
    box.layouts.forEach((l, i) => {
      const top = y + HEADER;
      const s = node.scopes[i]!;
      out.scopes.push({
        id: s.id,
        label: s.label,
        x: left,
        y: top,
        width: l.width,
        height: l.height + SCOPE_LABEL,
      });
      append(out, l, left, top + SCOPE_LABEL);
      left += l.width + GAP;
    });
  }
  scope.edges.forEach((edge, i) => {
    const e = g.edge({ v: edge.from, w: edge.to, name: String(i) });
    const laid: LaidEdge = {
      from: edge.from,
      to: edge.to,
      kind: edge.kind,
      points: e?.points ?? [],
    };
    if (edge.label !== undefined) {
      laid.label = edge.label;
      laid.shortLabel = shorten(edge.label);
      laid.labelLines = wrapLabel(edge.label);
      if (e?.x !== undefined && e.y !== undefined) laid.labelAt = { x: e.x, y: e.y };
    }
    out.edges.push(laid);
  });
  return out;
}

/** Adds a nested layout, moved by (dx, dy). */
function append(out: Layout, inner: Layout, dx: number, dy: number): void {
  const at = (p: Point) => ({ x: p.x + dx, y: p.y + dy });
  for (const s of inner.states) out.states.push({ ...s, x: s.x + dx, y: s.y + dy });
  for (const s of inner.scopes) out.scopes.push({ ...s, x: s.x + dx, y: s.y + dy });
  for (const m of inner.markers) out.markers.push({ ...m, ...at(m) });
  for (const e of inner.edges) {
    out.edges.push({
      ...e,
      points: e.points.map(at),
      ...(e.labelAt ? { labelAt: at(e.labelAt) } : {}),
    });
  }
}

export function layoutGraph(scope: GraphScope): Layout {
  const local = layoutScope(scope);
  const out: Layout = {
    width: local.width + 2 * MARGIN,
    height: local.height + 2 * MARGIN,
    states: [],
    scopes: [],
    markers: [],
    edges: [],
  };
  append(out, local, MARGIN, MARGIN);
  return out;
}
