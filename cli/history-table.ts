import type { HistoryEvent } from "../engine/core/history.js";

/**
 * `stepwise run --history` for a person: one aligned row per event (id, time since
 * the start, type, state, and the detail that matters: an error, or the output or
 * input, shortened). `--json` keeps the raw events for scripts.
 */
export function historyTable(events: readonly HistoryEvent[], width = 60): string {
  const start = events.length > 0 ? Date.parse(events[0]!.timestamp) : 0;
  const rows = events.map((event) => {
    const details = detailsOf(event);
    return [
      String(event.id),
      `+${((Date.parse(event.timestamp) - start) / 1000).toFixed(3)}s`,
      event.type,
      typeof details.name === "string" ? details.name : "",
      shorten(detailText(details), width),
    ];
  });
  const header = ["ID", "TIME", "TYPE", "STATE", "DETAIL"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}

function detailsOf(event: HistoryEvent): Record<string, unknown> {
  for (const [key, value] of Object.entries(event)) {
    if (key.endsWith("EventDetails") && typeof value === "object" && value !== null) {
      return value as Record<string, unknown>;
    }
  }
  return {};
}

function detailText(details: Record<string, unknown>): string {
  if (typeof details.error === "string" || typeof details.cause === "string") {
    return [details.error, details.cause].filter((x) => typeof x === "string").join(": ");
  }
  for (const key of ["output", "input", "resource"]) {
    const value = details[key];
    if (typeof value === "string") return `${key} ${value}`;
  }
  return "";
}

function shorten(text: string, width: number): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}
