import { useState } from "preact/hooks";
import { api, seg } from "../api/client.js";
import { can } from "../api/me.js";
import type { EventRule, List, Me } from "../api/types.js";
import { JsonView } from "../components/JsonView.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime, StatusBadge } from "../components/misc.js";
import { paths } from "../router.js";
import { patternSummary, targetText } from "../triggers/format.js";
import { deleteThenLeave, ListTable, NotYet, useNamed, usePolled } from "../triggers/resource.js";

const REFRESH_MS = 5000;

/** Event rules (`GET /v1/rules`): name, state, the pattern in one line, target. Cards on a phone. */
export function RulesPage() {
  const { value, error } = usePolled(() => api.get<List<EventRule>>("/v1/rules"), REFRESH_MS);
  return (
    <>
      <h1>Event rules</h1>
      <ListTable
        items={value?.items}
        error={error}
        empty={
          <>
            No rules. Create one with <code>POST /v1/rules</code>.
          </>
        }
        label="Event rules"
        class="rules"
        columns={["Name", "State", "Pattern", "Target"]}
        row={(r) => {
          const summary = patternSummary(r.eventPattern);
          return (
            <tr key={r.name} data-rule={r.name} data-state={r.state}>
              <td class="cell-name">
                <Link href={paths.rule(r.name)}>{r.name}</Link>
              </td>
              <td class="cell-status">
                <StatusBadge status={r.state} />
              </td>
              <td class="cell-pattern" data-label="Pattern" title={summary}>
                <code>{summary}</code>
              </td>
              <td data-label="Target">{targetText(r.target)}</td>
            </tr>
          );
        }}
      />
    </>
  );
}

/** One rule: its pattern and target as JSON; Delete after a confirmation. */
export function RulePage({ me, name }: { me: Me; name: string }) {
  const path = `/v1/rules/${seg(name)}`;
  const { value: rule, error, setError } = useNamed<EventRule>(path);
  const [busy, setBusy] = useState(false);

  const remove = async () => {
    setBusy(true);
    try {
      await deleteThenLeave(
        path,
        `Delete the rule ${name}? Events stop starting its target.`,
        paths.rules(),
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (!rule)
    return (
      <NotYet title={`Rule ${name}`} error={error} back={paths.rules()} backText="All rules" />
    );
  return (
    <>
      <p class="small">
        <Link href={paths.rules()}>Event rules</Link> /
      </p>
      <h1 class="title-line">
        <span class="mono wrap">{name}</span> <StatusBadge status={rule.state} />
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
            <Link href={paths.executions({ stateMachine: rule.target.stateMachine })}>
              {targetText(rule.target)}
            </Link>
          </dd>
          {rule.description ? (
            <>
              <dt>Description</dt>
              <dd>{rule.description}</dd>
            </>
          ) : null}
          <dt>Updated</dt>
          <dd>{formatTime(rule.updatedAt)}</dd>
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
        <JsonView value={rule.target} label="Target" />
      </details>
    </>
  );
}
