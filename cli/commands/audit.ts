import { readFile } from "node:fs/promises";
import { verifyAudit } from "../../runtime/audit/verify.js";
import { actionError, parseArgs } from "../args.js";
import { EXIT, UsageError, type Action, type Command } from "../command.js";

const usage = `Usage: stepwise audit verify FILE [--public-key PEM] [--json]

Checks an audit export (GET /v1/executions/:id/audit) offline: the Ed25519
signature holds and covers the header (execution record, versions, export time);
every history event hashes to its recorded hash on top of the previous one, ids
run 1..N in order, the chain starts on the execution's identity (ARN, version,
definition hash) and ends at the signed head; an ended execution's history ends
with the event that ended it; and, when the server's key is kept outside Redis
(STEPWISE_AUDIT_KEY), the full chain matches every checkpoint signed as the
history was written (event 1, every 32nd event, each terminal event) and none
is missing.

Options:
  --public-key PEM  the key the export must be signed with (GET /v1/audit/public-key);
                    without it, the key inside the file is used (a warning says so)
  --json            print {ok, problem?, head?, warnings?} as JSON

Warnings (on stderr; the exit code stays 0) say what the export does not prove:
signed with a key kept in Redis, events after the last checkpoint, an export of
the earlier format whose header is not signed.

Exit codes: 0 the export verifies, 1 it does not (what broke and where: a header
field, the first event that is changed, removed, inserted or reordered, a
checkpoint that does not match or is missing, the definition, the signature),
2 usage error.`;

const ACTIONS: Action[] = [
  {
    name: "verify",
    summary: "check a signed audit export offline: header, hash chain, checkpoints, signature",
  },
];

export const auditCommand: Command = {
  name: "audit",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: ["json"], values: ["public-key"] });
    const [sub, file, ...extra] = args.positionals;
    if (sub !== "verify") throw actionError(ACTIONS, sub);
    if (file === undefined) throw new UsageError("audit verify needs a FILE");
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    const text = await readText(file);
    const keyFile = args.values.get("public-key");
    const publicKeyPem = keyFile === undefined ? undefined : await readText(keyFile);
    const verdict = verifyAudit(text, publicKeyPem === undefined ? {} : { publicKeyPem });
    if (args.flags.has("json")) {
      io.stdout(JSON.stringify(verdict, null, 2) + "\n");
    } else if (verdict.ok) {
      io.stdout(
        `${file}: OK: ${verdict.head.eventId} events of ${verdict.executionArn}, head ${verdict.head.hash}\n`,
      );
      for (const warning of verdict.warnings) io.stderr(`warning: ${warning}\n`);
    } else {
      const at =
        verdict.problem.eventId !== undefined ? ` at event ${verdict.problem.eventId}` : "";
      io.stdout(`${file}: FAILED (${verdict.problem.kind}${at}): ${verdict.problem.message}\n`);
    }
    return verdict.ok ? EXIT.ok : EXIT.failed;
  },
};

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`${file}: ${(error as Error).message}`, false);
  }
}
