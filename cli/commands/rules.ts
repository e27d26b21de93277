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

const usage = `Usage: stepwise rules list
       stepwise rules get NAME
       stepwise rules create NAME FILE
       stepwise rules delete NAME

The event rules of a running Stepwise service. FILE is JSON:
{"eventPattern": {...}, "target": {"stateMachine": "...", "inputPath": "$.detail"}}.
An event put on the bus (POST /v1/events) that matches a rule's EventBridge
pattern starts its target once, as <NAME>-<event id>.

${CLIENT_OPTIONS}

Exit codes: 0 done, 1 the service refused (the error is printed), 2 usage error.`;

const ACTIONS: Action[] = [
  { name: "list", summary: "list the rules" },
  { name: "get", summary: "show a rule" },
  { name: "create", summary: "create a rule from a JSON file" },
  { name: "delete", summary: "delete a rule" },
];

export const rulesCommand: Command = {
  name: "rules",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: ["json"], values: [...CLIENT_VALUES] });
    const [action, name, file, ...extra] = args.positionals;
    if (!ACTIONS.some((a) => a.name === action)) throw actionError(ACTIONS, action);
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    if (action !== "list" && name === undefined)
      throw new UsageError(`${action} needs a rule name`);
    const service = ServiceClient.from(args);
    const json = args.flags.has("json");
    const path = `/v1/rules/${encodeURIComponent(name ?? "")}`;
    switch (action) {
      case "list": {
        const reply = await service.call("GET", "/v1/rules");
        if (reply.status !== 200) return refused(io, "rules", reply);
        if (json) return printJson(io, reply.body);
        const items = reply.body.items as Record<string, unknown>[];
        io.stdout(
          table(
            ["NAME", "STATE", "MACHINE", "PATTERN"],
            items.map((r) => [
              String(r.name),
              String(r.state),
              String((r.target as Record<string, unknown>).stateMachine),
              JSON.stringify(r.eventPattern),
            ]),
          ),
        );
        return EXIT.ok;
      }
      case "get": {
        const reply = await service.call("GET", path);
        if (reply.status !== 200) return refused(io, "rules", reply);
        return printJson(io, reply.body);
      }
      case "delete": {
        const reply = await service.call("DELETE", path);
        if (reply.status !== 204) return refused(io, "rules", reply);
        if (!json) io.stdout(`${name}: deleted\n`);
        return EXIT.ok;
      }
      case "create": {
        if (file === undefined) throw new UsageError("create needs a rule name and a JSON file");
        let body: unknown;
        try {
          body = JSON.parse(await readFile(file, "utf8"));
        } catch (err) {
          throw new UsageError(`cannot read '${file}' as JSON: ${(err as Error).message}`, false);
        }
        const reply = await service.call("POST", "/v1/rules", { ...(body as object), name });
        if (reply.status !== 201) return refused(io, "rules", reply);
        if (json) return printJson(io, reply.body);
        io.stdout(`${name}: created\n`);
        return EXIT.ok;
      }
      default:
        throw actionError(ACTIONS, action);
    }
  },
};
