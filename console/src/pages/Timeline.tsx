import { useEffect, useRef, useState } from "preact/hooks";
import type { HistoryEvent } from "../api/types.js";
import { formatDuration } from "../components/misc.js";
import { detailsOf, type DerivedHistory } from "../status/derive.js";

/** Long histories show their latest events first in full; the rest on request. */
const SHOWN = 300;

function stateNameOf(event: HistoryEvent, derived: DerivedHistory): string | undefined {
  const entryId = derived.entryOfEvent.get(event.id);
  if (entryId !== undefined) return derived.entries.get(entryId)?.name;
  const name = detailsOf(event).name;
  return typeof name === "string" ? name : undefined;
}

export type Order = "newest" | "oldest";

/**
 * The history as a timeline, newest first (or oldest first); an event of a state
 * selects that state's entry. While `follow` is on, the newest event stays in view
 * as events arrive. Each row shows the time since the previous event; an exit shows
 * how long its state took; retried attempts carry their number. A state's entered
 * event offers Fork (a new execution from there) when `onFork` is given.
 */
export function Timeline(props: {
  events: HistoryEvent[];
  derived: DerivedHistory;
  selectedEntry: number | undefined;
  onSelect: (name: string, entryId: number | undefined) => void;
  order: Order;
  onOrder: (order: Order) => void;
  follow: boolean;
  onFollow: (follow: boolean) => void;
  live: boolean;
  onFork?: ((event: HistoryEvent) => void) | undefined;
}) {
  const { events, derived, selectedEntry, onSelect, order, follow, onFork } = props;
  const [all, setAll] = useState(false);
  const list = useRef<HTMLOListElement>(null);
  const start = events.length > 0 ? Date.parse(events[0]!.timestamp) : 0;
  const latest = all || events.length <= SHOWN ? events : events.slice(events.length - SHOWN);
  const shown = order === "newest" ? [...latest].reverse() : latest;
  const byId = new Map(events.map((e) => [e.id, e]));

  // Following: the newest event in view (top when newest first, else the bottom).
  useEffect(() => {
    const el = list.current;
    if (!el || !follow) return;
    el.scrollTop = order === "newest" ? 0 : el.scrollHeight;
  }, [events.length, follow, order]);

  return (
    <section class="card" aria-labelledby="timeline-title">
      <h2 id="timeline-title">History ({events.length} events)</h2>
      <div class="timeline-tools">
        <label>
          <input
            type="checkbox"
            checked={order === "newest"}
            onChange={(e) =>
              props.onOrder((e.target as HTMLInputElement).checked ? "newest" : "oldest")
            }
          />
          Newest first
        </label>
        <label>
          <input
            type="checkbox"
            checked={follow}
            onChange={(e) => props.onFollow((e.target as HTMLInputElement).checked)}
          />
          Follow {props.live ? "live" : "the latest"}
        </label>
        {shown.length < events.length ? (
          <button type="button" class="small" onClick={() => setAll(true)}>
            Show all {events.length} events
          </button>
        ) : null}
      </div>
      <ol class="timeline" ref={list} data-order={order}>
        {shown.map((event) => {
          const name = stateNameOf(event, derived);
          const entryId = derived.entryOfEvent.get(event.id);
          const entry = entryId === undefined ? undefined : derived.entries.get(entryId);
          const details = detailsOf(event);
          const error = typeof details.error === "string" ? details.error : undefined;
          const at = Date.parse(event.timestamp);
          const previous = byId.get(event.id - 1);
          const step = previous ? at - Date.parse(previous.timestamp) : 0;
          const attempt = derived.attemptOfEvent.get(event.id);
          const exited = entry && entry.exitedEventId === event.id && entry.exitedAt;
          const forkable = onFork && /StateEntered$/.test(event.type);
          return (
            <li
              key={event.id}
              data-event-id={event.id}
              data-event-type={event.type}
              class={entryId !== undefined && entryId === selectedEntry ? "selected" : ""}
            >
              <span class="event-id">{event.id}</span>
              <span class="event-main">
                {name !== undefined ? (
                  <button type="button" class="link" onClick={() => onSelect(name, entryId)}>
                    {event.type} <span class="mono">{name}</span>
                  </button>
                ) : (
                  <span>{event.type}</span>
                )}
                {error ? <span class="event-error"> {error}</span> : null}
              </span>
              <span class="event-side">
                <span
                  class="event-time"
                  title={`${event.timestamp} · ${formatDuration(at - start)} after the start`}
                >
                  +{formatDuration(step)}
                </span>
                {forkable ? (
                  <button
                    type="button"
                    class="link small fork"
                    aria-label={`Fork from event ${event.id}`}
                    title="Fork: a new execution that starts here"
                    onClick={() => onFork(event)}
                  >
                    Fork
                  </button>
                ) : null}
              </span>
              {attempt !== undefined && (entry?.attempt ?? 1) > 1 ? (
                <span class="event-extra muted">attempt {attempt}</span>
              ) : null}
              {exited ? (
                <span class="event-extra muted">
                  {name} took {formatDuration(Date.parse(exited) - Date.parse(entry.enteredAt))}
                </span>
              ) : null}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
