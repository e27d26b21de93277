import { readFile } from "node:fs/promises";
import type { HistoryEvent } from "../../engine/core/history.js";
import { actionError, parseArgs } from "../args.js";
import { EXIT, UsageError, type Action, type Command, type CommandIO } from "../command.js";
import { historyTable } from "../history-table.js";
import {
  CLIENT_OPTIONS,
  CLIENT_VALUES,
  painter,
  printJson,
  refused,
  ServiceClient,
  statusColour,
  table,
} from "../service-client.js";
import { seconds, WatchView } from "../watch-view.js";

const usage = `Usage: stepwise executions list [--state-machine NAME] [--status S] [--limit N] [--cursor C]
       stepwise executions show ID
       stepwise executions history ID [--limit N] [--reverse]
       stepwise executions start MACHINE [--input JSON | --input-file FILE] [--name N] [--wait S]
       stepwise executions stop ID [--error E] [--cause C]
       stepwise executions pause ID [--reason R]
       stepwise executions resume ID
       stepwise executions redrive ID
       stepwise executions restart ID [--name N]
       stepwise executions fork ID --from EVENT_ID [--input JSON | --input-file FILE] [--name N]
       stepwise executions purge ID
       stepwise executions watch ID

The executions of a running Stepwise service. ID is an execution ARN, as 'start'
and 'list' print it. 'watch' follows an execution live (the service's event
stream) until it ends, one line per state, and exits 0 when it SUCCEEDED, 1
otherwise.

${CLIENT_OPTIONS}

Exit codes: 0 done, 1 the service refused (or the watched execution did not
succeed), 2 usage error.`;

const ACTIONS: Action[] = [
  { name: "list", summary: "list executions, by state machine or status" },
  { name: "show", summary: "show an execution: status, input, output, what it waits on" },
  { name: "history", summary: "print an execution's event history" },
  { name: "start", summary: "start an execution of a state machine" },
  { name: "stop", summary: "stop a running execution" },
  { name: "pause", summary: "pause a running execution where it is" },
  { name: "resume", summary: "resume a paused execution" },
  { name: "redrive", summary: "run a failed execution again from the state it ended in" },
  { name: "restart", summary: "start a new execution with the same input" },
  { name: "fork", summary: "start a new execution from an event of this one's history" },
  { name: "purge", summary: "delete an ended execution's record and history" },
  { name: "watch", summary: "follow an execution live until it ends" },
];

const enc = encodeURIComponent;

export const executionsCommand: Command = {
  name: "executions",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["json", "reverse"],
      values: [
        ...CLIENT_VALUES,
        "state-machine",
        "status",
        "limit",
        "cursor",
        "input",
        "input-file",
        "name",
        "wait",
        "error",
        "cause",
        "reason",
        "from",
      ],
    });
    const [action, target, ...extra] = args.positionals;
    if (!ACTIONS.some((a) => a.name === action)) throw actionError(ACTIONS, action);
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    const service = ServiceClient.from(args);
    const json = args.flags.has("json");
    const paint = painter(io.stdoutTTY);
    const need = (what: string): string => {
      if (target === undefined) throw new UsageError(`${action} needs ${what}`);
      return target;
    };
    const record = (body: Record<string, unknown>): number => {
      if (json) return printJson(io, body);
      io.stdout(describe(body, paint) + "\n");
      return EXIT.ok;
    };

    switch (action) {
      case "list": {
        if (target !== undefined) throw new UsageError("list takes no id");
        const query = new URLSearchParams();
        for (const [option, param] of [
          ["state-machine", "stateMachine"],
          ["status", "status"],
          ["limit", "limit"],
          ["cursor", "cursor"],
        ] as const) {
          const value = args.values.get(option);
          if (value !== undefined) query.set(param, value);
        }
        const reply = await service.call("GET", `/v1/executions?${query.toString()}`);
        if (reply.status !== 200) return refused(io, "executions", reply);
        if (json) return printJson(io, reply.body);
        const items = reply.body.items as Record<string, unknown>[];
        const rows = items.map((e) => [
          String(e.executionId),
          String(e.status),
          String(e.startedAt),
          e.stoppedAt ? String(e.stoppedAt) : "",
        ]);
        // Padding is measured on plain text; colour goes on after.
        const text = table(["EXECUTION", "STATUS", "STARTED", "STOPPED"], rows);
        io.stdout(
          text.replace(/ (RUNNING|PAUSED|SUCCEEDED|FAILED|TIMED_OUT|ABORTED) /g, (m, s: string) =>
            m.replace(s, paint(statusColour(s), s)),
          ),
        );
        if (reply.body.nextCursor) io.stdout(`(more: --cursor ${String(reply.body.nextCursor)})\n`);
        return EXIT.ok;
      }
      case "show": {
        const reply = await service.call("GET", `/v1/executions/${enc(need("an execution id"))}`);
        if (reply.status !== 200) return refused(io, "executions", reply);
        return record(reply.body);
      }
      case "history": {
        const query = new URLSearchParams({ limit: args.values.get("limit") ?? "1000" });
        if (args.flags.has("reverse")) query.set("reverse", "true");
        const reply = await service.call(
          "GET",
          `/v1/executions/${enc(need("an execution id"))}/history?${query.toString()}`,
        );
        if (reply.status !== 200) return refused(io, "executions", reply);
        if (json) return printJson(io, reply.body);
        io.stdout(historyTable(reply.body.items as HistoryEvent[]));
        return EXIT.ok;
      }
      case "start": {
        const machine = need("a state machine name");
        const body: Record<string, unknown> = {};
        const input = await jsonInput(args.values.get("input"), args.values.get("input-file"));
        if (input !== undefined) body.input = input;
        const name = args.values.get("name");
        if (name !== undefined) body.name = name;
        const wait = args.values.get("wait");
        const reply = await service.call(
          "POST",
          `/v1/state-machines/${enc(machine)}/executions${wait ? `?wait=${enc(wait)}` : ""}`,
          body,
          Number(wait ?? 0) || 0,
        );
        if (reply.status !== 200 && reply.status !== 201) return refused(io, "executions", reply);
        if (json) return printJson(io, reply.body);
        io.stdout(`${String(reply.body.executionId)}\n`);
        if (reply.body.status !== undefined) {
          io.stdout(describe(reply.body, paint) + "\n");
          return reply.body.status === "SUCCEEDED" || reply.body.status === "RUNNING"
            ? EXIT.ok
            : EXIT.failed;
        }
        return EXIT.ok;
      }
      case "stop":
      case "pause":
      case "resume":
      case "redrive": {
        const body: Record<string, unknown> = {};
        for (const option of action === "stop"
          ? ["error", "cause"]
          : action === "pause"
            ? ["reason"]
            : []) {
          const value = args.values.get(option);
          if (value !== undefined) body[option] = value;
        }
        const reply = await service.call(
          "POST",
          `/v1/executions/${enc(need("an execution id"))}/${action}`,
          body,
        );
        if (reply.status !== 200) return refused(io, "executions", reply);
        return record(reply.body);
      }
      case "restart": {
        const name = args.values.get("name");
        const reply = await service.call(
          "POST",
          `/v1/executions/${enc(need("an execution id"))}/restart`,
          name !== undefined ? { name } : {},
        );
        if (reply.status !== 200 && reply.status !== 201) return refused(io, "executions", reply);
        if (json) return printJson(io, reply.body);
        io.stdout(`${String(reply.body.executionId)}\n`);
        return EXIT.ok;
      }
      case "fork": {
        const from = Number(args.values.get("from"));
        if (!Number.isInteger(from) || from < 1) {
          throw new UsageError(
            "fork needs --from EVENT_ID (a history event id, as 'history' shows)",
          );
        }
        const body: Record<string, unknown> = { fromEventId: from };
        const input = await jsonInput(args.values.get("input"), args.values.get("input-file"));
        if (input !== undefined) body.input = input;
        const name = args.values.get("name");
        if (name !== undefined) body.name = name;
        const reply = await service.call(
          "POST",
          `/v1/executions/${enc(need("an execution id"))}/fork`,
          body,
        );
        if (reply.status !== 200 && reply.status !== 201) return refused(io, "executions", reply);
        if (json) return printJson(io, reply.body);
        io.stdout(`${String(reply.body.executionId)}\n`);
        return EXIT.ok;
      }
      case "purge": {
        const id = need("an execution id");
        const reply = await service.call("DELETE", `/v1/executions/${enc(id)}`);
        if (reply.status !== 204) return refused(io, "executions", reply);
        if (json) return printJson(io, { executionId: id, purged: true });
        io.stdout(`purged ${id}\n`);
        return EXIT.ok;
      }
      case "watch":
        return watch(service, need("an execution id"), io, json);
      default:
        throw actionError(ACTIONS, action);
    }
  },
};

/** `--input JSON` or `--input-file FILE`, parsed; a usage error when it is not JSON. */
async function jsonInput(inline: string | undefined, file: string | undefined): Promise<unknown> {
  const text = await inputOf(inline, file);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`the input is not JSON: ${(err as Error).message}`, false);
  }
}

async function inputOf(
  inline: string | undefined,
  file: string | undefined,
): Promise<string | undefined> {
  if (inline !== undefined && file !== undefined) {
    throw new UsageError("give --input or --input-file, not both");
  }
  if (file === undefined) return inline;
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read '${file}': ${(err as Error).message}`, false);
  }
}

function describe(r: Record<string, unknown>, paint: ReturnType<typeof painter>): string {
  const status = String(r.status);
  const lines = [
    `execution  ${String(r.executionId)}`,
    `status     ${paint(statusColour(status), status)}`,
  ];
  if (r.stateMachine !== undefined)
    lines.push(`machine    ${String(r.stateMachine)} (version ${String(r.version)})`);
  if (r.startedAt !== undefined) lines.push(`started    ${String(r.startedAt)}`);
  if (r.stoppedAt !== undefined) lines.push(`stopped    ${String(r.stoppedAt)}`);
  const pause = r.pause as Record<string, unknown> | undefined;
  if (pause)
    lines.push(
      `paused     ${String(pause.at)}${pause.by ? ` by ${String(pause.by)}` : ""}${pause.reason ? `: ${String(pause.reason)}` : ""}`,
    );
  if (r.error !== undefined)
    lines.push(`error      ${String(r.error)}${r.cause ? `: ${String(r.cause)}` : ""}`);
  if (r.input !== undefined) lines.push(`input      ${JSON.stringify(r.input)}`);
  if (r.output !== undefined) lines.push(`output     ${JSON.stringify(r.output)}`);
  for (const task of (r.pendingTasks as Record<string, unknown>[] | undefined) ?? []) {
    lines.push(`waiting    ${String(task.stateName)} on ${String(task.resource)}`);
  }
  return lines.join("\n");
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * Follows the execution's event stream to its end. On a terminal the current state
 * is one line redrawn in place with a spinner and its elapsed time; elsewhere each
 * state is a line when entered and one when left. `--json` prints the events.
 */
async function watch(
  service: ServiceClient,
  id: string,
  io: CommandIO,
  json: boolean,
): Promise<number> {
  const tty = io.stdoutTTY === true && !json;
  const paint = painter(tty);
  const view = new WatchView();
  let status: string | undefined;
  let frame = 0;
  const clear = (): void => {
    if (tty) io.stdout("\r\u001b[2K");
  };
  const draw = (): void => {
    if (!tty || !view.current) return;
    clear();
    const spin = SPINNER[frame++ % SPINNER.length]!;
    io.stdout(
      `${paint("yellow", spin)} ${view.current.name}  ${seconds(Date.now() - view.current.since)}`,
    );
  };
  const ticker = tty ? setInterval(draw, 100) : undefined;
  try {
    const failed = await service.stream(`/v1/executions/${enc(id)}/events`, (message) => {
      if (message.event === "end") {
        status = String((message.data as { status: string }).status);
        return;
      }
      if (message.event !== "history") return;
      const event = message.data as HistoryEvent;
      if (json) {
        io.stdout(JSON.stringify(event) + "\n");
        return;
      }
      for (const line of view.apply(event)) {
        if (line.mark === "entered") {
          if (!tty) io.stdout(`→ ${line.text}\n`);
          continue;
        }
        clear();
        if (line.mark === "done") io.stdout(`${paint("green", "✓")} ${line.text}\n`);
        else if (line.mark === "failed") io.stdout(`${paint("red", "✗")} ${line.text}\n`);
        else io.stdout(`${line.text}\n`);
      }
      draw();
    });
    if (failed) return refused(io, "executions", failed);
  } finally {
    if (ticker) clearInterval(ticker);
    clear();
  }
  if (status === undefined) {
    io.stderr("stepwise executions: the event stream ended before the execution did\n");
    return EXIT.failed;
  }
  return status === "SUCCEEDED" ? EXIT.ok : EXIT.failed;
}
