import { actionError } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { NamedResourceClient, parseNamedCommand, type NamedResource } from "../named-resources.js";
import { CLIENT_OPTIONS, table } from "../service-client.js";

const usage = `Usage: stepwise schedules list
       stepwise schedules get NAME
       stepwise schedules create NAME --machine M --expression EXPR [options]
       stepwise schedules delete NAME
       stepwise schedules backfill NAME --from ISO --to ISO

The schedules of a running Stepwise service. EXPR is EventBridge Scheduler's
syntax: 'at(2026-12-24T18:00:00)', 'rate(5 minutes)' or
'cron(0 9 ? * MON-FRI *)'. Each tick starts the execution <NAME>-<yyyymmddThhmmssZ>.

Create options:
  --machine M        the state machine to start (--version N or --alias A of it)
  --expression EXPR  when (quote it: it has parentheses and spaces)
  --timezone TZ      IANA time zone the expression is read in (default UTC)
  --input JSON       the execution input (an object also gets scheduledTime)
  --overlap POLICY   SKIP (default), BUFFER_ONE, ALLOW_ALL or CANCEL_OTHER
  --catch-up S       seconds a missed tick may be late and still start (default 300)
  --start-date ISO, --end-date ISO, --disabled

${CLIENT_OPTIONS}

Exit codes: 0 done, 1 the service refused (the error is printed), 2 usage error.`;

const SCHEDULES: NamedResource = {
  command: "schedules",
  noun: "schedule",
  path: "/v1/schedules",
  actions: [
    { name: "list", summary: "list the schedules and their next ticks" },
    { name: "get", summary: "show a schedule, its last tick and skipped ticks" },
    { name: "create", summary: "create a schedule" },
    { name: "delete", summary: "delete a schedule" },
    { name: "backfill", summary: "start the ticks of a past range" },
  ],
  columns: ["NAME", "STATE", "EXPRESSION", "NEXT TICK", "MACHINE"],
  row: (s) => [
    String(s.name),
    String(s.state),
    String(s.scheduleExpression),
    String(s.nextTick ?? "-"),
    String((s.target as Record<string, unknown>).stateMachine),
  ],
};

const CREATE_VALUES = [
  "machine",
  "version",
  "alias",
  "expression",
  "timezone",
  "input",
  "overlap",
  "catch-up",
  "start-date",
  "end-date",
];

export const schedulesCommand: Command = {
  name: "schedules",
  usage,
  async run(argv, io) {
    const { action, name, args } = parseNamedCommand(SCHEDULES, argv, {
      flags: ["disabled"],
      values: [...CREATE_VALUES, "from", "to"],
    });
    const client = new NamedResourceClient(SCHEDULES, args, io);
    switch (action) {
      case "list":
        return client.list();
      case "get":
        return client.get(name!);
      case "delete":
        return client.delete(name!);
      case "create":
        return client.create(
          name!,
          createBody(args.values, args.flags),
          (created) => `created, next tick ${String(created.nextTick ?? "none")}`,
        );
      case "backfill": {
        const from = args.values.get("from");
        const to = args.values.get("to");
        if (from === undefined || to === undefined)
          throw new UsageError("backfill needs --from and --to (ISO 8601 date-times)");
        const answer = await client.call("POST", `${client.pathOf(name!)}/backfill`, 200, {
          from,
          to,
        });
        if (typeof answer === "number") return answer;
        const started = answer.executions as Record<string, unknown>[];
        io.stdout(
          table(
            ["TICK", "EXECUTION", "NEW"],
            started.map((e) => [String(e.tick), String(e.executionId), e.created ? "yes" : "no"]),
          ),
        );
        return EXIT.ok;
      }
      default:
        throw actionError(SCHEDULES.actions, action);
    }
  },
};

function createBody(
  values: ReadonlyMap<string, string>,
  flags: ReadonlySet<string>,
): Record<string, unknown> {
  const machine = values.get("machine");
  const expression = values.get("expression");
  if (machine === undefined || expression === undefined)
    throw new UsageError("create needs --machine and --expression");
  const target: Record<string, unknown> = { stateMachine: machine };
  const version = values.get("version");
  if (version !== undefined) {
    if (!/^\d+$/.test(version))
      throw new UsageError(`--version '${version}' is not a version number`);
    target.version = Number(version);
  }
  if (values.get("alias") !== undefined) target.alias = values.get("alias");
  const input = values.get("input");
  if (input !== undefined) {
    try {
      target.input = JSON.parse(input) as unknown;
    } catch {
      throw new UsageError(`--input is not JSON: ${input}`);
    }
  }
  const body: Record<string, unknown> = { target, scheduleExpression: expression };
  const optional: [string, string][] = [
    ["timezone", "scheduleExpressionTimezone"],
    ["overlap", "overlapPolicy"],
    ["start-date", "startDate"],
    ["end-date", "endDate"],
  ];
  for (const [flag, field] of optional)
    if (values.get(flag) !== undefined) body[field] = values.get(flag);
  const catchUp = values.get("catch-up");
  if (catchUp !== undefined) {
    if (!/^\d+$/.test(catchUp))
      throw new UsageError(`--catch-up '${catchUp}' is not a number of seconds`);
    body.catchUpWindowSeconds = Number(catchUp);
  }
  if (flags.has("disabled")) body.state = "DISABLED";
  return body;
}
