import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import type { StateSummary } from "../status/derive.js";
import type { LaidEdge, LaidState, Layout } from "./layout.js";

/**
 * Draws a laid-out graph as SVG in a box of its own: fitted and centred by default,
 * zoomed with the buttons, Ctrl+wheel or a pinch, panned by dragging. Each state is
 * a focusable group carrying `data-state` (its name) and `data-status`, so it can be
 * clicked, reached with Tab and chosen with Enter or Space. `focus` names a state to
 * keep in view (a running execution's current state) until the user moves the view.
 */

export interface GraphProps {
  layout: Layout;
  statuses?: Map<string, StateSummary>;
  /** Transitions the execution took, as `from\u0000to` state names (`^start`/`^end` for markers). */
  taken?: Set<string>;
  selected?: string | undefined;
  focus?: string | undefined;
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

const MIN_SCALE = 0.2;
const MAX_SCALE = 3;
/** Below this a fitted graph is too small to read (more so on a phone): a focused state is shown at READABLE. */
const legible = (width: number) => (width < 600 ? 0.75 : 0.6);
const READABLE = 0.9;

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
  }${state.retry ? `. Retry: ${state.retry}` : ""}`;
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
            tabindex: 0,
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
      {state.retry ? (
        <g class="retry-rule" data-retry={state.retry} transform="translate(6,-7)">
          <rect width="44" height="14" rx="7" />
          <text x="22" y="7" text-anchor="middle" dominant-baseline="central">
            ↻ Retry
          </text>
        </g>
      ) : null}
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

interface View {
  x: number;
  y: number;
  scale: number;
}

/** The last segment of a node id is its state name; markers end in ^start / ^end. */
function nameOfId(id: string): string {
  return id.slice(id.lastIndexOf("/") + 1);
}

export function Graph({ layout, statuses, taken, selected, focus, onSelect }: GraphProps) {
  const live = statuses !== undefined;
  const box = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState<{ w: number; h: number }>();
  const [view, setView] = useState<View>();
  /** The user zoomed or panned: the view stays theirs until Fit. */
  const moved = useRef(false);
  const pointers = useRef(new Map<number, { x: number; y: number }>());
  const dragged = useRef(false);

  // Compound boxes first, so nested states and edges draw on top of them.
  const states = useMemo(
    () => [...layout.states].sort((a, b) => Number(b.compound) - Number(a.compound)),
    [layout],
  );

  // The box: the page's width; as tall as the graph up to 70% (phone: 55%) of the window.
  const height = Math.round(
    Math.max(
      200,
      Math.min(
        layout.height + 8,
        (typeof window === "undefined" ? 800 : window.innerHeight) *
          (typeof window !== "undefined" && window.innerWidth < 600 ? 0.5 : 0.7),
      ),
    ),
  );

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    // A box not laid out yet (hidden, or 0 wide) has nothing to fit into: keep the last size.
    const measure = () => {
      if (el.clientWidth > 0 && el.clientHeight > 0)
        setSize({ w: el.clientWidth, h: el.clientHeight });
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const fitView = (w: number, h: number): View => {
    const scale = Math.max(MIN_SCALE / 2, Math.min(1, w / layout.width, h / layout.height));
    return {
      scale,
      x: layout.width / 2 - w / scale / 2,
      y: layout.height / 2 - h / scale / 2,
    };
  };

  const focusedState = focus ? layout.states.find((s) => s.name === focus) : undefined;

  // Fit (or follow the focused state) until the user takes over.
  useEffect(() => {
    if (!size || moved.current) return;
    const fitted = fitView(size.w, size.h);
    if (focusedState && fitted.scale < legible(size.w)) {
      const scale = READABLE;
      const cx = focusedState.x + focusedState.width / 2;
      const cy = focusedState.y + focusedState.height / 2;
      setView({ scale, x: cx - size.w / scale / 2, y: cy - size.h / scale / 2 });
    } else setView(fitted);
  }, [size?.w, size?.h, layout, focusedState?.id]);

  const zoomAt = (factor: number, px?: number, py?: number) => {
    if (!size || !view) return;
    moved.current = true;
    const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, view.scale * factor));
    const ax = px ?? size.w / 2;
    const ay = py ?? size.h / 2;
    // The point under (ax, ay) stays put.
    const gx = view.x + ax / view.scale;
    const gy = view.y + ay / view.scale;
    setView({ scale, x: gx - ax / scale, y: gy - ay / scale });
  };

  const onWheel = (e: WheelEvent) => {
    // Plain wheel scrolls the page; Ctrl+wheel (and a touchpad pinch) zooms.
    if (!e.ctrlKey && !e.metaKey) return;
    e.preventDefault();
    const rect = box.current!.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY / 300), e.clientX - rect.left, e.clientY - rect.top);
  };

  const onPointerDown = (e: PointerEvent) => {
    pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
    dragged.current = false;
  };
  const onPointerMove = (e: PointerEvent) => {
    const prev = pointers.current.get(e.pointerId);
    if (!prev || !view || !size) return;
    const all = [...pointers.current.entries()];
    if (all.length === 2) {
      // Pinch: the distance between the two pointers scales the view.
      const other = all.find(([id]) => id !== e.pointerId)![1];
      const before = Math.hypot(prev.x - other.x, prev.y - other.y);
      const after = Math.hypot(e.clientX - other.x, e.clientY - other.y);
      pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (before > 0) {
        const rect = box.current!.getBoundingClientRect();
        dragged.current = true;
        zoomAt(
          after / before,
          (e.clientX + other.x) / 2 - rect.left,
          (e.clientY + other.y) / 2 - rect.top,
        );
      }
      return;
    }
    const dx = e.clientX - prev.x;
    const dy = e.clientY - prev.y;
    if (!dragged.current && Math.hypot(dx, dy) < 4) return;
    if (!dragged.current) (e.currentTarget as Element).setPointerCapture?.(e.pointerId);
    dragged.current = true;
    moved.current = true;
    pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
    setView({ ...view, x: view.x - dx / view.scale, y: view.y - dy / view.scale });
  };
  const onPointerUp = (e: PointerEvent) => {
    pointers.current.delete(e.pointerId);
  };
  // A drag ends in a click on whatever it started on: that click chooses nothing.
  const onClickCapture = (e: MouseEvent) => {
    if (dragged.current) {
      e.stopPropagation();
      dragged.current = false;
    }
  };

  const fit = () => {
    if (!size) return;
    moved.current = false;
    setView(fitView(size.w, size.h));
  };

  const edgeTaken = (edge: LaidEdge): boolean => {
    if (!taken) return false;
    return taken.has(`${nameOfId(edge.from)}\u0000${nameOfId(edge.to)}`);
  };

  const viewBox =
    view && size && [view.x, view.y, view.scale].every(Number.isFinite)
      ? `${view.x.toFixed(1)} ${view.y.toFixed(1)} ${(size.w / view.scale).toFixed(1)} ${(size.h / view.scale).toFixed(1)}`
      : `0 0 ${layout.width} ${layout.height}`;

  return (
    <div class="graph-box">
      <div class="graph-tools" role="toolbar" aria-label="Graph view">
        <button type="button" class="small" aria-label="Zoom in" onClick={() => zoomAt(1.25)}>
          +
        </button>
        <button type="button" class="small" aria-label="Zoom out" onClick={() => zoomAt(0.8)}>
          −
        </button>
        <button type="button" class="small" onClick={fit}>
          Fit
        </button>
        {focusedState ? (
          <button
            type="button"
            class="small"
            onClick={() => {
              if (!size) return;
              moved.current = true;
              const scale = Math.max(view?.scale ?? 1, READABLE);
              setView({
                scale,
                x: focusedState.x + focusedState.width / 2 - size.w / scale / 2,
                y: focusedState.y + focusedState.height / 2 - size.h / scale / 2,
              });
            }}
          >
            Current state
          </button>
        ) : null}
      </div>
      <div
        class="graph-view"
        ref={box}
        style={{ height: `${height}px` }}
        onWheel={onWheel}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={onPointerUp}
        onClickCapture={onClickCapture}
      >
        <svg
          class="graph"
          width="100%"
          height="100%"
          viewBox={viewBox}
          role="group"
          aria-label="State machine graph"
          data-scale={view?.scale.toFixed(3)}
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
            <marker
              id="arrow-taken"
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              markerWidth="7"
              markerHeight="7"
              orient="auto-start-reverse"
            >
              <path d="M0,0L10,5L0,10z" class="arrow-head-taken" />
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
          {layout.edges.map((edge, i) => {
            const on = edgeTaken(edge);
            return (
              <g
                key={i}
                class={`edge edge-${edge.kind}${on ? " taken" : ""}`}
                data-edge-kind={edge.kind}
                data-edge-label={edge.label}
                data-taken={on ? "true" : undefined}
              >
                <path d={pathOf(edge)} marker-end={on ? "url(#arrow-taken)" : "url(#arrow)"} />
                {edge.labelAt && edge.labelLines ? (
                  <EdgeLabel edge={edge} lines={edge.labelLines} />
                ) : null}
              </g>
            );
          })}
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
    </div>
  );
}

function EdgeLabel({ edge, lines }: { edge: LaidEdge; lines: string[] }) {
  const width = Math.max(...lines.map((l) => l.length)) * 6.4 + 8;
  const height = lines.length * 14 + 4;
  return (
    <g class="edge-label" transform={`translate(${edge.labelAt!.x},${edge.labelAt!.y})`}>
      <title>{edge.label}</title>
      <rect x={-width / 2} y={-height / 2} width={width} height={height} rx="3" />
      <text text-anchor="middle">
        {lines.map((line, i) => (
          <tspan key={i} x="0" y={-height / 2 + 2 + 14 * i + 7} dominant-baseline="central">
            {line}
          </tspan>
        ))}
      </text>
    </g>
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
