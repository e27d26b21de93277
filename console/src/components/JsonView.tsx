import type { Json } from "../api/types.js";

/**
 * Pretty-printed JSON whose objects and arrays fold (native <details>, so keyboard
 * and screen readers work without script). Deep levels start folded.
 */

const OPEN_DEPTH = 2;

/** History details hold JSON as text; show it parsed when it parses. */
export function parseMaybe(text: string | undefined): Json | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

function Scalar({ value }: { value: Json }) {
  const kind = value === null ? "null" : typeof value;
  return <span class={`json-${kind}`}>{JSON.stringify(value)}</span>;
}

function Node({ name, value, depth }: { name?: string; value: Json; depth: number }) {
  const key = name !== undefined ? <span class="json-key">{JSON.stringify(name)}: </span> : null;
  if (value === null || typeof value !== "object") {
    return (
      <div class="json-line">
        {key}
        <Scalar value={value} />
      </div>
    );
  }
  const entries: [string | undefined, Json][] = Array.isArray(value)
    ? value.map((v) => [undefined, v])
    : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) {
    return (
      <div class="json-line">
        {key}
        {open}
        {close}
      </div>
    );
  }
  return (
    <details class="json-node" open={depth < OPEN_DEPTH}>
      <summary>
        {key}
        {open}
        <span class="json-count">
          {" "}
          {entries.length} {Array.isArray(value) ? "item" : "key"}
          {entries.length === 1 ? "" : "s"}
        </span>
      </summary>
      <div class="json-children">
        {entries.map(([k, v], i) => (
          <Node key={k ?? i} name={k} value={v} depth={depth + 1} />
        ))}
      </div>
      <div class="json-line">{close}</div>
    </details>
  );
}

export function JsonView({ value, label }: { value: Json | undefined; label?: string }) {
  if (value === undefined) return <p class="muted">—</p>;
  return (
    <div class="json" aria-label={label}>
      <Node value={value} depth={0} />
    </div>
  );
}
