import { useMemo } from "preact/hooks";
import type { StateSummary } from "../status/derive.js";
import type { LaidEdge, LaidState, Layout } from "./layout.js";

/**
 * Draws a laid-out graph as SVG. Each state is a focusable group carrying
 * `data-state` (its name) and `data-status`, so it can be clicked, reached with Tab
 * and chosen with Enter or Space.
 */

export interface GraphProps {
  layout: Layout;
  statuses?: Map<string, StateSummary>;
  selected?: string;
  onSelect?: (name: string) => void;
}

const STATUS_WORDS: Record<string, string> = {
  "not-reached": "not reached",
  running: "running",
  succeeded: "succeeded",
  retried: "succeeded after retries",
  caught: "failed, caught",
  failed: "failed",
  aborted: "stopped",
};

function pathOf(edge: LaidEdge): string {
  return edge.points
    .map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`)
    .join("");
}

function StateNode(props: {
  state: LaidState;
  summary: StateSummary | undefined;
  live: boolean;
  selected: boolean;
  onSelect: ((name: string) => void) | undefined;
}) {
  const { state, summary, live, selected, onSelect } = props;
  const status = live ? (summary?.status ?? "not-reached") : "plain";
  const retries = summary?.retries ?? 0;
  const label = `${state.name} (${state.type})${live ? `: ${STATUS_WORDS[status] ?? status}` : ""}${
    retries > 0 ? `, retried ${retries} times` : ""
  }`;
  const choose = () => onSelect?.(state.name);
  return (
    <g
      class={`state state-${status}${state.compound ? " compound" : ""}${selected ? " selected" : ""}`}
      data-state={state.name}
      data-status={status}
      data-retries={retries}
      transform={`translate(${state.x},${state.y})`}
      {...(onSelect
        ? {
            tabIndex: 0,
            role: "button",
            onClick: (e: MouseEvent) => {
              e.stopPropagation();
              choose();
            },
            onKeyDown: (e: KeyboardEvent) => {
              if (e.key === "Enter" || e.key === " ") {
                e.preventDefault();
                choose();
              }
            },
          }
        : {})}
      aria-label={label}
    >
      <title>{label}</title>
      <rect width={state.width} height={state.height} rx={state.compound ? 10 : 8} />
      <text
        x={state.compound ? 10 : state.width / 2}
        y={state.compound ? 17 : state.height / 2}
        class="state-name"
        text-anchor={state.compound ? "start" : "middle"}
        dominant-baseline="central"
      >
        {state.name}
        <tspan class="state-type"> {state.type}</tspan>
      </text>
      {retries > 0 ? (
        <g class="retry-count" transform={`translate(${state.width - 8},0)`}>
          <circle r="10" />
          <text text-anchor="middle" dominant-baseline="central">
            ↻{retries}
          </text>
        </g>
      ) : null}
    </g>
  );
}

export function Graph({ layout, statuses, selected, onSelect }: GraphProps) {
  const live = statuses !== undefined;
  // Compound boxes first, so nested states and edges draw on top of them.
  const states = useMemo(
    () => [...layout.states].sort((a, b) => Number(b.compound) - Number(a.compound)),
    [layout],
  );
  return (
    <div class="graph-scroll">
      <svg
        class="graph"
        width={layout.width}
        height={layout.height}
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        role="group"
        aria-label="State machine graph"
      >
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
          >
            <path d="M0,0L10,5L0,10z" class="arrow-head" />
          </marker>
        </defs>
        {states
          .filter((s) => s.compound)
          .map((s) => (
            <StateNode
              key={s.id}
              state={s}
              summary={statuses?.get(s.name)}
              live={live}
              selected={selected === s.name}
              onSelect={onSelect}
            />
          ))}
        {layout.scopes.map((scope) => (
          <g key={scope.id} class="scope">
            <rect x={scope.x} y={scope.y} width={scope.width} height={scope.height} rx="6" />
            <text x={scope.x + 6} y={scope.y + 12}>
              {scope.label}
            </text>
          </g>
        ))}
        {layout.edges.map((edge, i) => (
          <g
            key={i}
            class={`edge edge-${edge.kind}`}
            data-edge-kind={edge.kind}
            data-edge-label={edge.label}
          >
            <path d={pathOf(edge)} marker-end="url(#arrow)" />
            {edge.labelAt && edge.shortLabel ? (
              <g class="edge-label" transform={`translate(${edge.labelAt.x},${edge.labelAt.y})`}>
                <title>{edge.label}</title>
                <rect
                  x={-(edge.shortLabel.length * 3.2 + 4)}
                  y="-8"
                  width={edge.shortLabel.length * 6.4 + 8}
                  height="16"
                  rx="3"
                />
                <text text-anchor="middle" dominant-baseline="central">
                  {edge.shortLabel}
                </text>
              </g>
            ) : null}
          </g>
        ))}
        {layout.markers.map((m) => (
          <circle
            key={m.id}
            class={`marker marker-${m.kind}`}
            cx={m.x}
            cy={m.y}
            r="7"
            data-marker={m.kind}
          />
        ))}
        {states
          .filter((s) => !s.compound)
          .map((s) => (
            <StateNode
              key={s.id}
              state={s}
              summary={statuses?.get(s.name)}
              live={live}
              selected={selected === s.name}
              onSelect={onSelect}
            />
          ))}
      </svg>
    </div>
  );
}

export function Legend() {
  return (
    <ul class="legend" aria-label="Legend">
      {Object.entries(STATUS_WORDS).map(([status, words]) => (
        <li key={status}>
          <span class={`swatch state-${status}`} aria-hidden="true" />
          {words}
        </li>
      ))}
    </ul>
  );
}
