import { useEffect, useState } from "preact/hooks";
import { api, seg } from "../api/client.js";
import { can } from "../api/me.js";
import type { Json, Me } from "../api/types.js";
import { JsonView } from "../components/JsonView.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime, StatusBadge } from "../components/misc.js";
import { navigate, paths } from "../router.js";
import {
  isObject,
  itemsOf,
  obj,
  patternSummary,
  targetText,
  text,
  type JsonObject,
} from "../triggers/read.js";

const REFRESH_MS = 5000;

/** Event rules (`GET /v1/rules`): name, state, the pattern in one line, target. Cards on a phone. */
export function RulesPage() {
  const [items, setItems] = useState<JsonObject[]>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    let stopped = false;
    const load = async () => {
      try {
        const answer = await api.get<Json>("/v1/rules");
        if (!stopped) {
          setItems(itemsOf(answer));
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
  }, []);

  return (
    <>
      <h1>Event rules</h1>
      <ErrorNotice error={error} />
      {items === undefined ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : items.length === 0 ? (
        <p class="muted">
          No rules. Create one with <code>POST /v1/rules</code>.
        </p>
      ) : (
        <div class="list-box">
          <table aria-label="Event rules" class="cards rules">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Pattern</th>
                <th scope="col">Target</th>
              </tr>
            </thead>
            <tbody>
              {items.map((r) => {
                const name = text(r, "name") ?? "";
                const state = text(r, "state") ?? "?";
                const summary = patternSummary(obj(r, "eventPattern"));
                return (
                  <tr key={name} data-rule={name} data-state={state}>
                    <td class="cell-name">
                      <Link href={paths.rule(name)}>{name}</Link>
                    </td>
                    <td class="cell-status">
                      <StatusBadge status={state} />
                    </td>
                    <td class="cell-pattern" data-label="Pattern" title={summary}>
                      <code>{summary}</code>
                    </td>
                    <td data-label="Target">{targetText(obj(r, "target"))}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** One rule: its pattern and target as JSON; Delete after a confirmation. */
export function RulePage({ me, name }: { me: Me; name: string }) {
  const [rule, setRule] = useState<JsonObject>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const path = `/v1/rules/${seg(name)}`;

  useEffect(() => {
    setRule(undefined);
    api
      .get<Json>(path)
      .then((r) => (isObject(r) ? setRule(r) : setError(new Error("Unexpected answer"))), setError);
  }, [name]);

  const remove = async () => {
    if (!confirm(`Delete the rule ${name}? Events stop starting its target.`)) return;
    setBusy(true);
    try {
      await api.delete(path);
      navigate(paths.rules());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (!rule) {
    return (
      <>
        <h1>Rule {name}</h1>
        {error ? <ErrorNotice error={error} /> : <p class="muted">Loading…</p>}
        <p>
          <Link href={paths.rules()}>All rules</Link>
        </p>
      </>
    );
  }
  const state = text(rule, "state") ?? "?";
  const target = obj(rule, "target");
  return (
    <>
      <p class="small">
        <Link href={paths.rules()}>Event rules</Link> /
      </p>
      <h1 class="title-line">
        <span class="mono wrap">{name}</span> <StatusBadge status={state} />
      </h1>
      {can(me, "definitions:write") ? (
        <div class="actions-bar" aria-label="Actions">
          <div class="actions">
            <button type="button" class="danger" disabled={busy} onClick={() => void remove()}>
              Delete
            </button>
          </div>
        </div>
      ) : null}
      <ErrorNotice error={error} />
      <section class="card" aria-labelledby="rule-facts">
        <h2 id="rule-facts">Rule</h2>
        <dl class="facts-list">
          <dt>Target</dt>
          <dd>
            <Link href={paths.executions({ stateMachine: text(target, "stateMachine") })}>
              {targetText(target)}
            </Link>
          </dd>
          {text(rule, "description") ? (
            <>
              <dt>Description</dt>
              <dd>{text(rule, "description")}</dd>
            </>
          ) : null}
          <dt>Updated</dt>
          <dd>{formatTime(text(rule, "updatedAt"))}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="rule-pattern">
        <h2 id="rule-pattern">Event pattern</h2>
        <JsonView value={rule.eventPattern} label="Event pattern" />
      </section>
      <details class="card definition">
        <summary>
          <h2>Target</h2>
        </summary>
        <JsonView value={target} label="Target" />
      </details>
    </>
  );
}
