import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { permissionsOf, SCOPES as AUTH_SCOPES } from "../../api/auth.js";
import * as responseSchemas from "../../api/response-schemas.js";
import type * as Shapes from "../../api/shapes.js";
import { consoleBuildOptions } from "../../console/build.js";
import { EXECUTION_STATUSES as CONSOLE_STATUSES } from "../../console/src/api/types.js";
import { APPROVAL_STATUSES as ENGINE_APPROVAL_STATUSES } from "../../engine/states/approval.js";
import { EXECUTION_STATUSES as RUNTIME_STATUSES } from "../../runtime/contract/index.js";

/**
 * One source for the API's shapes (issue 42): the console takes the types api/shapes.ts
 * derives from the API's JSON Schemas, with `import type`, and declares none by hand;
 * and its bundle holds nothing of the server.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CONSOLE_SRC = join(ROOT, "console/src");
const SHAPES = join(ROOT, "api/shapes.ts");
const RESPONSE_SCHEMAS = join(ROOT, "api/response-schemas.ts");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

function parse(path: string): ts.SourceFile {
  return ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.ES2022, true);
}

/** Every interface and type alias a file declares, and the member names of each object type. */
function declarations(file: ts.SourceFile): { names: string[]; memberSets: string[][] } {
  const names: string[] = [];
  const memberSets: string[][] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) {
      names.push(node.name.text);
    }
    if (ts.isInterfaceDeclaration(node) || ts.isTypeLiteralNode(node)) {
      memberSets.push(
        node.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : [])),
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return { names, memberSets };
}

/** The type names api/shapes.ts exports, and the names console/src/api/types.ts gives them. */
function shapeNames(): Set<string> {
  const names = new Set<string>();
  for (const statement of parse(SHAPES).statements) {
    if (
      ts.isTypeAliasDeclaration(statement) &&
      statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    ) {
      names.add(statement.name.text);
    }
  }
  for (const statement of parse(join(CONSOLE_SRC, "api/types.ts")).statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause) {
      if (!ts.isNamedExports(statement.exportClause)) continue;
      for (const element of statement.exportClause.elements) names.add(element.name.text);
    }
  }
  return names;
}

/** Fields that, together, are one of the API's shapes (whatever the declaration is called). */
const FINGERPRINTS: Record<string, string[]> = {
  "execution record or summary": ["executionId", "stateMachine", "status", "startedAt"],
  "history event": ["previousEventId", "timestamp"],
  "state machine": ["definitionHash", "createdAt"],
  "pending task": ["stateName", "resource", "scheduledAt"],
  "approval record": ["approvalId", "envelopeHash"],
  "approval decision": ["approver", "decision", "decidedAt"],
  "GET /v1/me": ["permissions", "authenticated"],
  page: ["items", "nextCursor"],
};

describe("the console's API shapes", () => {
  it("types.ts re-exports the derived shapes with `export type … from api/shapes`", () => {
    const file = parse(join(CONSOLE_SRC, "api/types.ts"));
    const reexported = new Map<string, string>();
    for (const statement of file.statements) {
      if (
        ts.isExportDeclaration(statement) &&
        statement.isTypeOnly &&
        statement.moduleSpecifier &&
        ts.isStringLiteral(statement.moduleSpecifier) &&
        statement.moduleSpecifier.text.endsWith("/api/shapes.js") &&
        statement.exportClause &&
        ts.isNamedExports(statement.exportClause)
      ) {
        for (const element of statement.exportClause.elements) {
          reexported.set(element.name.text, (element.propertyName ?? element.name).text);
        }
      }
    }
    for (const name of [
      "ExecutionRecord",
      "ExecutionSummary",
      "ExecutionDetail",
      "ExecutionStatus",
      "PendingTask",
      "HistoryEvent",
      "StateMachineSummary",
      "StateMachineDetail",
      "Page",
      "Json",
      "Me",
      "Permission",
    ]) {
      expect(reexported.get(name), name).toBe(name);
    }
    expect(reexported.get("Approval")).toBe("ApprovalRecord");
    expect(reexported.get("ApiErrorBody")).toBe("ErrorBody");
  });

  it("no file of console/src declares one of them by hand", () => {
    const shapes = shapeNames();
    expect(shapes.size).toBeGreaterThan(10);
    const found: string[] = [];
    for (const path of sourceFiles(CONSOLE_SRC)) {
      const where = relative(ROOT, path);
      const { names, memberSets } = declarations(parse(path));
      for (const name of names) {
        if (shapes.has(name)) found.push(`${where}: declares ${name}`);
      }
      for (const members of memberSets) {
        for (const [shape, fields] of Object.entries(FINGERPRINTS)) {
          if (fields.every((f) => members.includes(f))) {
            found.push(`${where}: an object type with ${fields.join(", ")} (the ${shape})`);
          }
        }
      }
    }
    expect(found).toEqual([]);
  });

  it("the console's type program holds no server code and no Node types", () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, "console/tsconfig.json"),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    );
    if (!config) throw new Error("console/tsconfig.json did not parse");
    const program = ts.createProgram(config.fileNames, config.options);
    const outside = program
      .getSourceFiles()
      .map((f) => relative(ROOT, f.fileName))
      .filter(
        (f) =>
          !f.startsWith("console/src/") &&
          !/(^|\/)node_modules\/(typescript\/lib|preact|@dagrejs)\//.test(f),
      )
      .sort();
    // api/shapes.ts and the import-free module it derives from, nothing else.
    expect(outside).toEqual(["api/response-schemas.ts", "api/shapes.ts"]);
    const imports = parse(RESPONSE_SCHEMAS).statements.filter(
      (s) => ts.isImportDeclaration(s) || ts.isImportEqualsDeclaration(s),
    );
    expect(imports).toEqual([]);
  });

  it("the bundle takes nothing from outside console/src and preact/dagre", async () => {
    const dir = await mkdtemp(join(tmpdir(), "stepwise-console-shapes-"));
    try {
      const result = await build(consoleBuildOptions(dir));
      const inputs = Object.keys(result.metafile.inputs).sort();
      expect(inputs.some((p) => p.startsWith("console/src/"))).toBe(true);
      const foreign = inputs.filter(
        (p) => !p.startsWith("console/src/") && !/(^|\/)node_modules\/(preact|@dagrejs)\//.test(p),
      );
      expect(foreign).toEqual([]);

      // And in the text: no description of the API's schemas (they would come with a
      // value import of api/), no server module's source.
      const js = Object.keys(result.metafile.outputs).find((p) => p.endsWith(".js"));
      if (!js) throw new Error("no JS output");
      const text = await readFile(join(ROOT, js), "utf8");
      const markers = descriptions(responseSchemas);
      expect(markers.length).toBeGreaterThan(10);
      const leaked = markers.filter((m) => text.includes(m));
      expect(leaked).toEqual([]);
      for (const server of [/fastify/, /ioredis/, /bullmq/, /["'`]node:/]) {
        expect(server.test(text), String(server)).toBe(false);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the enum lists written out in api/response-schemas.ts are the runtime's", () => {
    expect(responseSchemas.EXECUTION_STATUSES).toEqual(RUNTIME_STATUSES);
    expect(responseSchemas.APPROVAL_STATUSES).toEqual(ENGINE_APPROVAL_STATUSES);
    expect(responseSchemas.SCOPES).toEqual(AUTH_SCOPES);
    expect(responseSchemas.PERMISSIONS).toEqual(permissionsOf("admin"));
    expect(CONSOLE_STATUSES).toEqual(RUNTIME_STATUSES);
  });
});

/** Every `description` text in a tree of schemas. */
function descriptions(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) descriptions(v, into);
  else if (typeof value === "object" && value !== null) {
    for (const [key, v] of Object.entries(value)) {
      if (key === "description" && typeof v === "string") into.push(v);
      else descriptions(v, into);
    }
  }
  return into;
}

/*
 * What FromSchema makes of the schemas, checked by `tsc -p tsconfig.json` (these
 * functions never run). A response object is closed: a misspelt field is an error.
 */
export function typeChecks(
  record: Shapes.ExecutionRecord,
  event: Shapes.HistoryEvent,
  approval: Shapes.ApprovalRecord,
  page: Shapes.Page<Shapes.ExecutionSummary>,
): unknown[] {
  const input: Shapes.Json = record.input;
  const stopped: string | undefined = record.stoppedAt;
  const pausedAt: string | undefined = record.pause?.at;
  // @ts-expect-error -- not a field of the record
  const typo = record.stopedAt;
  // @ts-expect-error -- the summary has no input
  const noInput = page.items[0]?.input;
  const details: Record<string, Shapes.Json> | undefined = event.TaskScheduledEventDetails;
  // @ts-expect-error -- only `…EventDetails` keys besides the declared ones
  const other = event.somethingElse;
  const policy: string | null = approval.policy;
  const statuses: Shapes.ExecutionStatus[] = ["RUNNING", "PAUSED"];
  // @ts-expect-error -- not a status
  const wrong: Shapes.ExecutionStatus = "DONE";
  const next: string | undefined = page.nextCursor;
  return [input, stopped, pausedAt, typo, noInput, details, other, policy, statuses, wrong, next];
}
