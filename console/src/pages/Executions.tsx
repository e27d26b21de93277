import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client.js";
import {
  EXECUTION_STATUSES,
  type ExecutionSummary,
  type Page,
  type StateMachineSummary,
} from "../api/types.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime, StatusBadge } from "../components/misc.js";
import { navigate, paths, type Location } from "../router.js";

/** The list re-reads its page this often: cheap (O(limit)) and enough for a list. */
const REFRESH_MS = 2000;
const PAGE_SIZE = 50;

/**
 * Executions, newest first, filtered by state machine and status (kept in the URL
 * so a filtered view can be shared), a page at a time with the API's cursors.
 */
export function ExecutionsPage({ loc }: { loc: Location }) {
  const stateMachine = loc.query.get("stateMachine") ?? "";
  const status = loc.query.get("status") ?? "";
  const [machines, setMachines] = useState<string[]>([]);
  // Cursors of the pages before this one (back), and this page's own.
  const [trail, setTrail] = useState<(string | undefined)[]>([]);
  const [cursor, setCursor] = useState<string>();
  const [page, setPage] = useState<Page<ExecutionSummary>>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    api
      .get<Page<StateMachineSummary>>("/v1/state-machines", { limit: 1000 })
      .then((p) => setMachines(p.items.map((m) => m.name)))
      .catch(() => setMachines([]));
  }, []);

  useEffect(() => {
    setTrail([]);
    setCursor(undefined);
  }, [stateMachine, status]);

  useEffect(() => {
    let stopped = false;
    const load = async () => {
      try {
        const next = await api.get<Page<ExecutionSummary>>("/v1/executions", {
          stateMachine,
          status,
          cursor,
          limit: PAGE_SIZE,
        });
        if (!stopped) {
          setPage(next);
          setError(undefined);
        }
      } catch (err) {
        if (!stopped) setError(err);
      }
    };
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [stateMachine, status, cursor]);

  const filter = (key: "stateMachine" | "status", value: string) =>
    navigate(paths.executions({ stateMachine, status, [key]: value }), true);

  return (
    <>
      <h1>Executions</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          State machine{" "}
          <select
            value={stateMachine}
            onChange={(e) => filter("stateMachine", (e.target as HTMLSelectElement).value)}
          >
            <option value="">All</option>
            {[...new Set([...machines, ...(stateMachine ? [stateMachine] : [])])].map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status{" "}
          <select
            value={status}
            onChange={(e) => filter("status", (e.target as HTMLSelectElement).value)}
          >
            <option value="">All</option>
            {EXECUTION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorNotice error={error} />
      {page === undefined ? (
        <p class="muted">Loading…</p>
      ) : page.items.length === 0 ? (
        <p class="muted">No executions match.</p>
      ) : (
        <div class="table-scroll">
          <table aria-label="Executions">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State machine</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Stopped</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((e) => (
                <tr key={e.executionId} data-execution={e.executionId}>
                  <td>
                    <Link href={paths.execution(e.executionId)}>{e.name}</Link>
                  </td>
                  <td>
                    {e.stateMachine} <span class="muted">v{e.version}</span>
                  </td>
                  <td>
                    <StatusBadge status={e.status} />
                  </td>
                  <td>{formatTime(e.startedAt)}</td>
                  <td>{formatTime(e.stoppedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={trail.length === 0}
          onClick={() => {
            setCursor(trail[trail.length - 1]);
            setTrail(trail.slice(0, -1));
          }}
        >
          Newer
        </button>
        <button
          type="button"
          disabled={!page?.nextCursor}
          onClick={() => {
            setTrail([...trail, cursor]);
            setCursor(page?.nextCursor);
          }}
        >
          Older
        </button>
      </nav>
    </>
  );
}
