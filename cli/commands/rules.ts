import { readFile } from "node:fs/promises";
import { actionError } from "../args.js";
import { UsageError, type Command } from "../command.js";
import { NamedResourceClient, parseNamedCommand, type NamedResource } from "../named-resources.js";
import { CLIENT_OPTIONS } from "../service-client.js";

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

const RULES: NamedResource = {
  command: "rules",
  noun: "rule",
  path: "/v1/rules",
  actions: [
    { name: "list", summary: "list the rules" },
    { name: "get", summary: "show a rule" },
    { name: "create", summary: "create a rule from a JSON file" },
    { name: "delete", summary: "delete a rule" },
  ],
  columns: ["NAME", "STATE", "MACHINE", "PATTERN"],
  row: (r) => [
    String(r.name),
    String(r.state),
    String((r.target as Record<string, unknown>).stateMachine),
    JSON.stringify(r.eventPattern),
  ],
};

export const rulesCommand: Command = {
  name: "rules",
  usage,
  async run(argv, io) {
    const { action, name, rest, args } = parseNamedCommand(RULES, argv, { extra: 1 });
    const client = new NamedResourceClient(RULES, args, io);
    switch (action) {
      case "list":
        return client.list();
      case "get":
        return client.get(name!);
      case "delete":
        return client.delete(name!);
      case "create": {
        const [file] = rest;
        if (file === undefined) throw new UsageError("create needs a rule name and a JSON file");
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
        } catch (err) {
          throw new UsageError(`cannot read '${file}' as JSON: ${(err as Error).message}`, false);
        }
        return client.create(name!, body, () => "created");
      }
      default:
        throw actionError(RULES.actions, action);
    }
  },
};
