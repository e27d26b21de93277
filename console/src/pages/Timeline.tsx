import { useState } from "preact/hooks";
import type { HistoryEvent } from "../api/types.js";
import { detailsOf, type DerivedHistory } from "../status/derive.js";

/** Long histories show their latest events first in full; the rest on request. */
const SHOWN = 300;

function stateNameOf(event: HistoryEvent, derived: DerivedHistory): string | undefined {
  const entryId = derived.entryOfEvent.get(event.id);
  if (entryId !== undefined) return derived.entries.get(entryId)?.name;
  const name = detailsOf(event).name;
  return typeof name === "string" ? name : undefined;
}

/** The history as a timeline; an event of a state selects that state's entry. */
export function Timeline(props: {
  events: HistoryEvent[];
  derived: DerivedHistory;
  selectedEntry: number | undefined;
  onSelect: (name: string, entryId: number | undefined) => void;
}) {
  const { events, derived, selectedEntry, onSelect } = props;
  const [all, setAll] = useState(false);
  const start = events.length > 0 ? Date.parse(events[0]!.timestamp) : 0;
  const shown = all || events.length <= SHOWN ? events : events.slice(events.length - SHOWN);
  return (
    <section class="card" aria-labelledby="timeline-title">
      <h2 id="timeline-title">History ({events.length} events)</h2>
      {shown.length < events.length ? (
        <button type="button" onClick={() => setAll(true)}>
          Show all {events.length} events
        </button>
      ) : null}
      <ol class="timeline">
        {shown.map((event) => {
          const name = stateNameOf(event, derived);
          const entryId = derived.entryOfEvent.get(event.id);
          const details = detailsOf(event);
          const error = typeof details.error === "string" ? details.error : undefined;
          const elapsed = Date.parse(event.timestamp) - start;
          return (
            <li
              key={event.id}
              data-event-type={event.type}
              class={entryId !== undefined && entryId === selectedEntry ? "selected" : ""}
            >
              <span class="event-id">{event.id}</span>
              <span class="event-time" title={event.timestamp}>
                +{elapsed} ms
              </span>
              {name !== undefined ? (
                <button type="button" class="link" onClick={() => onSelect(name, entryId)}>
                  {event.type} <span class="mono">{name}</span>
                </button>
              ) : (
                <span>{event.type}</span>
              )}
              {error ? <span class="event-error"> {error}</span> : null}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
