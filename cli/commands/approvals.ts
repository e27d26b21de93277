import { actionError, parseArgs } from "../args.js";
import { EXIT, UsageError, type Action, type Command } from "../command.js";
import { CLIENT_OPTIONS, CLIENT_VALUES, refused, ServiceClient } from "../service-client.js";

const usage = `Usage: stepwise approvals list [--status S] [--approver GROUP] [--state-machine NAME] [--limit N] [--cursor C]
       stepwise approvals show ID
       stepwise approvals approve ID [--comment TEXT]
       stepwise approvals reject ID [--comment TEXT]

The approval inbox of a running Stepwise service. 'approve' and 'reject' read the
approval first, print its subject and details, and send the envelope hash of what
they printed: a decision always binds to what was shown.

${CLIENT_OPTIONS}

Deciding takes an admin key or an approve key.

Exit codes: 0 done, 1 the service refused (the error is printed), 2 usage error.`;

const ACTIONS: Action[] = [
  { name: "list", summary: "list approvals, by status, approver or state machine" },
  { name: "show", summary: "show an approval: subject, details, decisions" },
  { name: "approve", summary: "approve what an approval shows" },
  { name: "reject", summary: "reject what an approval shows" },
];

function describe(a: Record<string, unknown>): string {
  const decisions =
    (a.decisions as { approver: string; decision: string; comment: string | null }[]) ?? [];
  return [
    `approval   ${String(a.approvalId)}  ${String(a.status)}`,
    `subject    ${String(a.subject)}`,
    `details    ${JSON.stringify(a.details, null, 2).replace(/\n/g, "\n           ")}`,
    `execution  ${String(a.executionId)} (state ${String(a.stateName)})`,
    `approvers  ${(a.approvers as string[]).join(", ") || "(any)"}; ${String(a.requiredApprovals)} needed` +
      (a.policy ? `; policy ${String(a.policy)}` : ""),
    `expires    ${a.expiresAt === null ? "never" : String(a.expiresAt)}`,
    `hash       ${String(a.envelopeHash)}`,
    ...decisions.map(
      (d) => `decided    ${d.approver}: ${d.decision}${d.comment ? ` — ${d.comment}` : ""}`,
    ),
  ].join("\n");
}

export const approvalsCommand: Command = {
  name: "approvals",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["json"],
      values: [
        ...CLIENT_VALUES,
        "comment",
        "status",
        "approver",
        "state-machine",
        "limit",
        "cursor",
      ],
    });
    const [action, id, ...extra] = args.positionals;
    if (!ACTIONS.some((a) => a.name === action)) throw actionError(ACTIONS, action);
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    const service = ServiceClient.from(args);
    const call = (method: string, path: string, body?: unknown) => service.call(method, path, body);
    const json = args.flags.has("json");
    if (action === "list") {
      if (id !== undefined) throw new UsageError("list takes no id");
      const query = new URLSearchParams();
      for (const [option, param] of [
        ["status", "status"],
        ["approver", "approver"],
        ["state-machine", "stateMachine"],
        ["limit", "limit"],
        ["cursor", "cursor"],
      ] as const) {
        const value = args.values.get(option);
        if (value !== undefined) query.set(param, value);
      }
      const reply = await call("GET", `/v1/approvals?${query.toString()}`);
      if (reply.status !== 200) return refused(io, "approvals", reply);
      if (json) {
        io.stdout(JSON.stringify(reply.body, null, 2) + "\n");
        return EXIT.ok;
      }
      const items = reply.body.items as Record<string, unknown>[];
      for (const a of items) {
        io.stdout(
          `${String(a.approvalId)}  ${String(a.status).padEnd(9)}  ${String(a.createdAt)}  ${String(a.subject)}\n`,
        );
      }
      if (reply.body.nextCursor) io.stdout(`(more: --cursor ${String(reply.body.nextCursor)})\n`);
      return EXIT.ok;
    }
    if (id === undefined) throw new UsageError(`${action} needs an approval id`);
    const path = `/v1/approvals/${encodeURIComponent(id)}`;
    const record = await call("GET", path);
    if (record.status !== 200) return refused(io, "approvals", record);
    if (action === "show") {
      io.stdout((json ? JSON.stringify(record.body, null, 2) : describe(record.body)) + "\n");
      return EXIT.ok;
    }
    // What was shown is what is decided: the hash sent is the one printed here.
    if (!json) io.stdout(describe(record.body) + "\n");
    const comment = args.values.get("comment");
    const reply = await call("POST", `${path}/decisions`, {
      decision: action === "approve" ? "APPROVE" : "REJECT",
      envelopeHash: record.body.envelopeHash,
      ...(comment !== undefined ? { comment } : {}),
    });
    if (reply.status !== 200) return refused(io, "approvals", reply);
    io.stdout(
      json
        ? JSON.stringify(reply.body, null, 2) + "\n"
        : `${action === "approve" ? "approved" : "rejected"}: approval is now ${String(reply.body.status)}\n`,
    );
    return EXIT.ok;
  },
};
