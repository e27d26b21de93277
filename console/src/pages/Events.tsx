import { useState } from "preact/hooks";
import { api } from "../api/client.js";
import { can } from "../api/me.js";
import type { BusEvent, Me, Page, PutEventsAnswer } from "../api/types.js";
import { JsonView } from "../components/JsonView.js";
import { ErrorNotice, formatTime } from "../components/misc.js";
import { keysText } from "../triggers/format.js";
import { ListTable, usePolled } from "../triggers/resource.js";

const REFRESH_MS = 3000;
const LIMIT = 100;

/** The detail box's text: a JSON object, checked with JSON.parse before anything is sent. */
export function checkDetail(
  raw: string,
): { ok: true; text: string } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw.trim() === "" ? "{}" : raw);
  } catch (err) {
    return { ok: false, error: `The detail is not JSON: ${(err as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, error: "The detail must be a JSON object." };
  return { ok: true, text: JSON.stringify(value) };
}

/**
 * The bus (`GET /v1/events`): the newest events, their detail folded as JSON, re-read
 * every few seconds; and "Send a test event" (`POST /v1/events`) for keys that may.
 */
export function EventsPage({ me }: { me: Me }) {
  const [sent, setSent] = useState(0);
  const { value, error } = usePolled(
    () => api.get<Page<BusEvent>>("/v1/events", { limit: LIMIT }),
    REFRESH_MS,
    [sent],
  );

  return (
    <>
      <h1>Events</h1>
      {can(me, "executions:write") ? <SendEvent onSent={() => setSent((n) => n + 1)} /> : null}
      <ListTable
        items={value?.items}
        error={error}
        empty="No events on the bus."
        label="Events"
        class="events"
        columns={["Source", "Detail type", "Time", "Id", "Detail"]}
        row={(e) => (
          <tr key={e.id} data-event={e.id}>
            <td class="cell-name mono">{e.source}</td>
            <td class="cell-status">
              <span class="badge">{e["detail-type"]}</span>
            </td>
            <td data-label="Time">{formatTime(e.time)}</td>
            <td class="cell-id" data-label="Id" title={e.id}>
              <code>{e.id}</code>
            </td>
            <td class="cell-detail" data-label="Detail">
              <details class="event-detail">
                <summary>{keysText(e.detail)}</summary>
                <JsonView value={e.detail} label="Detail" />
              </details>
            </td>
          </tr>
        )}
      />
    </>
  );
}

/** Source, detail-type and a detail object: one entry put on the bus; shows its EventId. */
function SendEvent({ onSent }: { onSent: () => void }) {
  const [source, setSource] = useState("console.test");
  const [detailType, setDetailType] = useState("Test");
  const [detail, setDetail] = useState("{}");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [eventId, setEventId] = useState<string>();

  const submit = async (event: Event) => {
    event.preventDefault();
    setEventId(undefined);
    const checked = checkDetail(detail);
    if (!checked.ok) {
      setError(new Error(checked.error));
      return;
    }
    if (!source.trim() || !detailType.trim()) {
      setError(new Error("Source and detail-type are needed."));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api.post<PutEventsAnswer>("/v1/events", {
        Entries: [{ Source: source.trim(), DetailType: detailType.trim(), Detail: checked.text }],
      });
      const entry = answer.Entries[0];
      if (entry?.EventId) {
        setEventId(entry.EventId);
        onSent();
      } else setError(new Error(`${entry?.ErrorCode ?? "Refused"}: ${entry?.ErrorMessage ?? ""}`));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <details class="card send-event">
      <summary>
        <h2>Send a test event</h2>
      </summary>
      <form onSubmit={(e) => void submit(e)}>
        <div class="filters">
          <label class="grow">
            Source
            <input
              name="source"
              value={source}
              spellcheck={false}
              onInput={(e) => setSource((e.target as HTMLInputElement).value)}
            />
          </label>
          <label class="grow">
            Detail type
            <input
              name="detail-type"
              value={detailType}
              spellcheck={false}
              onInput={(e) => setDetailType((e.target as HTMLInputElement).value)}
            />
          </label>
        </div>
        <label>
          Detail (a JSON object)
          <textarea
            name="detail"
            value={detail}
            spellcheck={false}
            onInput={(e) => setDetail((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <p>
          <button type="submit" disabled={busy}>
            Send
          </button>
        </p>
      </form>
      <ErrorNotice error={error} />
      {eventId ? (
        <p class="notice ok" role="status" data-event-id={eventId}>
          Sent: EventId <code class="wrap">{eventId}</code>
        </p>
      ) : null}
    </details>
  );
}
