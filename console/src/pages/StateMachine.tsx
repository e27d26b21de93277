import { useEffect, useMemo, useState } from "preact/hooks";
import { api, seg } from "../api/client.js";
import { can } from "../api/me.js";
import type { Me, StateMachineDetail } from "../api/types.js";
import { parseInput } from "../forms/json-input.js";
import { DefinitionView } from "../components/Definition.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime } from "../components/misc.js";
import { Graph } from "../graph/Graph.js";
import { layoutGraph } from "../graph/layout.js";
import { definitionGraph } from "../graph/model.js";
import { navigate, paths } from "../router.js";

/** A state machine: its graph, its versions, and a form to start an execution. */
export function StateMachinePage({
  me,
  name,
  version,
}: {
  me: Me;
  name: string;
  version?: number;
}) {
  const [machine, setMachine] = useState<StateMachineDetail>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setMachine(undefined);
    api
      .get<StateMachineDetail>(`/v1/state-machines/${seg(name)}`, { version })
      .then(setMachine, setError);
  }, [name, version]);
  const layout = useMemo(
    () => (machine ? layoutGraph(definitionGraph(machine.definition)) : undefined),
    [machine],
  );

  return (
    <>
      <h1>
        State machine <span class="mono">{name}</span>
      </h1>
      <ErrorNotice error={error} />
      {machine && layout ? (
        <div class="split">
          <section class="card graph-card" aria-labelledby="graph-title">
            <h2 id="graph-title">
              Version {machine.version}
              {machine.version !== machine.latestVersion ? " (not the latest)" : ""}
            </h2>
            <Graph layout={layout} />
          </section>
          <div class="side">
            {can(me, "executions:write") ? <StartForm name={name} /> : null}
            <section class="card" aria-labelledby="versions-title">
              <h2 id="versions-title">Versions</h2>
              <ul class="plain">
                {[...machine.versions].reverse().map((v) => (
                  <li key={v.version}>
                    {v.version === machine.version ? (
                      <strong aria-current="page">Version {v.version}</strong>
                    ) : (
                      <Link href={paths.machine(name, v.version)}>Version {v.version}</Link>
                    )}{" "}
                    <span class="muted">{formatTime(v.createdAt)}</span>
                  </li>
                ))}
              </ul>
              {can(me, "executions:read") ? (
                <p>
                  <Link href={paths.executions({ stateMachine: name })}>Executions of {name}</Link>
                </p>
              ) : null}
            </section>
          </div>
          <DefinitionView machine={machine} />
        </div>
      ) : error ? null : (
        <p class="muted">Loading…</p>
      )}
    </>
  );
}

function StartForm({ name }: { name: string }) {
  const [input, setInput] = useState("{}");
  const [executionName, setExecutionName] = useState("");
  const [invalid, setInvalid] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    const parsed = parseInput(input);
    if (!parsed.ok) {
      setInvalid(parsed.message);
      return;
    }
    setInvalid(undefined);
    setBusy(true);
    try {
      const started = await api.post<{ executionId: string }>(
        `/v1/state-machines/${seg(name)}/executions`,
        { input: parsed.value, ...(executionName.trim() ? { name: executionName.trim() } : {}) },
      );
      navigate(paths.execution(started.executionId));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="start-title">
      <h2 id="start-title">Start execution</h2>
      <form onSubmit={submit} noValidate>
        <label for="start-input">Input (JSON)</label>
        <textarea
          id="start-input"
          class="mono"
          rows={8}
          spellcheck={false}
          value={input}
          aria-invalid={invalid !== undefined}
          aria-describedby={invalid ? "start-input-error" : undefined}
          onInput={(e) => setInput((e.target as HTMLTextAreaElement).value)}
        />
        {invalid ? (
          <p id="start-input-error" class="notice error" role="alert">
            {invalid}
          </p>
        ) : null}
        <label for="start-name">Execution name (optional)</label>
        <input
          id="start-name"
          value={executionName}
          onInput={(e) => setExecutionName((e.target as HTMLInputElement).value)}
        />
        <ErrorNotice error={error} />
        <button type="submit" class="primary" disabled={busy}>
          Start execution
        </button>
      </form>
    </section>
  );
}
