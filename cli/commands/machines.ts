import { readFile } from "node:fs/promises";
import { actionError, parseArgs } from "../args.js";
import { EXIT, UsageError, type Action, type Command } from "../command.js";
import {
  CLIENT_OPTIONS,
  CLIENT_VALUES,
  printJson,
  refused,
  ServiceClient,
  table,
} from "../service-client.js";

const usage = `Usage: stepwise machines list [--limit N] [--cursor C]
       stepwise machines show NAME [--version N]
       stepwise machines create NAME FILE
       stepwise machines update NAME FILE
       stepwise machines deploy NAME FILE

The state machines of a running Stepwise service. FILE is a definition in JSON or
YAML; the service validates it and answers its diagnostics when it is refused.
'deploy' creates the state machine, or stores a new version when its definition
changed, and does nothing when it did not: safe to run again, from scripts and CI.

${CLIENT_OPTIONS}

Exit codes: 0 done, 1 the service refused (the error is printed), 2 usage error.`;

const ACTIONS: Action[] = [
  { name: "list", summary: "list the state machines, latest versions" },
  { name: "show", summary: "show a state machine's versions and definition" },
  { name: "create", summary: "create a state machine from a definition file" },
  { name: "update", summary: "store a new version of a state machine from a file" },
  { name: "deploy", summary: "create it, or a new version when the file changed (idempotent)" },
];

export const machinesCommand: Command = {
  name: "machines",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["json"],
      values: [...CLIENT_VALUES, "limit", "cursor", "version"],
    });
    const [action, name, file, ...extra] = args.positionals;
    if (!ACTIONS.some((a) => a.name === action)) throw actionError(ACTIONS, action);
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    const service = ServiceClient.from(args);
    const json = args.flags.has("json");
    switch (action) {
      case "list": {
        if (name !== undefined) throw new UsageError("list takes no name");
        const query = new URLSearchParams();
        for (const option of ["limit", "cursor"]) {
          const value = args.values.get(option);
          if (value !== undefined) query.set(option, value);
        }
        const reply = await service.call("GET", `/v1/state-machines?${query.toString()}`);
        if (reply.status !== 200) return refused(io, "machines", reply);
        if (json) return printJson(io, reply.body);
        const items = reply.body.items as Record<string, unknown>[];
        io.stdout(
          table(
            ["NAME", "VERSION", "CREATED", "HASH"],
            items.map((m) => [
              String(m.name),
              String(m.version),
              String(m.createdAt),
              String(m.definitionHash).slice(0, 12),
            ]),
          ),
        );
        if (reply.body.nextCursor) io.stdout(`(more: --cursor ${String(reply.body.nextCursor)})\n`);
        return EXIT.ok;
      }
      case "show": {
        if (name === undefined) throw new UsageError("show needs a state machine name");
        const version = args.values.get("version");
        const path = `/v1/state-machines/${encodeURIComponent(name)}${version ? `?version=${encodeURIComponent(version)}` : ""}`;
        const reply = await service.call("GET", path);
        if (reply.status !== 200) return refused(io, "machines", reply);
        if (json) return printJson(io, reply.body);
        const versions = reply.body.versions as Record<string, unknown>[];
        io.stdout(
          `${String(reply.body.name)}  version ${String(reply.body.version)} of ${String(reply.body.latestVersion)}\n\n` +
            table(
              ["VERSION", "CREATED", "HASH"],
              versions.map((v) => [
                String(v.version),
                String(v.createdAt),
                String(v.definitionHash).slice(0, 12),
              ]),
            ) +
            `\n${JSON.stringify(reply.body.definition, null, 2)}\n`,
        );
        return EXIT.ok;
      }
      case "create":
      case "update":
      case "deploy": {
        if (name === undefined || file === undefined) {
          throw new UsageError(`${action} needs a state machine name and a definition file`);
        }
        let text: string;
        try {
          text = await readFile(file, "utf8");
        } catch (err) {
          throw new UsageError(`cannot read '${file}': ${(err as Error).message}`, false);
        }
        const create = () => service.call("POST", "/v1/state-machines", { name, definition: text });
        const update = () =>
          service.call("PUT", `/v1/state-machines/${encodeURIComponent(name)}`, {
            definition: text,
          });
        let reply = action === "create" ? await create() : await update();
        // deploy: an update of a state machine that is not there yet creates it.
        let created = action === "create";
        if (action === "deploy" && reply.status === 404) {
          reply = await create();
          created = true;
        }
        if (reply.status !== 200 && reply.status !== 201) {
          if (!json) {
            for (const d of (reply.body.details as Record<string, unknown>[] | undefined) ?? []) {
              const where =
                d.line !== undefined ? `${file}:${String(d.line)}:${String(d.column ?? 1)}` : file;
              io.stderr(`${where}: ${String(d.code ?? "")} ${String(d.message ?? "")}\n`);
            }
          }
          return json ? (printJson(io, reply.body), EXIT.failed) : refused(io, "machines", reply);
        }
        if (json) return printJson(io, reply.body);
        created ||= reply.body.created === true;
        io.stdout(
          `${String(reply.body.name)}: version ${String(reply.body.version)}${created ? "" : " (unchanged)"}\n`,
        );
        return EXIT.ok;
      }
      default:
        throw actionError(ACTIONS, action);
    }
  },
};
