import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client.js";
import type { Page, StateMachineSummary } from "../api/types.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime } from "../components/misc.js";
import { paths } from "../router.js";

export function StateMachinesPage() {
  const [items, setItems] = useState<StateMachineSummary[]>();
  const [cursor, setCursor] = useState<string>();
  const [error, setError] = useState<unknown>();

  const load = async (after?: string) => {
    try {
      const page = await api.get<Page<StateMachineSummary>>("/v1/state-machines", {
        cursor: after,
      });
      setItems((prev) => (after ? [...(prev ?? []), ...page.items] : page.items));
      setCursor(page.nextCursor);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), []);

  return (
    <>
      <h1>State machines</h1>
      <ErrorNotice error={error} />
      {items === undefined ? (
        <p class="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted">
          No state machines yet. Create one with POST /v1/state-machines or `stepwise machines
          create`.
        </p>
      ) : (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Latest version</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {items.map((m) => (
                <tr key={m.name}>
                  <td>
                    <Link href={paths.machine(m.name)}>{m.name}</Link>
                  </td>
                  <td>{m.version}</td>
                  <td>{formatTime(m.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor ? (
        <button type="button" onClick={() => void load(cursor)}>
          Load more
        </button>
      ) : null}
    </>
  );
}
