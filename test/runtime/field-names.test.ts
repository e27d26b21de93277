import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { FIELD_TABLES } from "../../runtime/store/fields.js";

/**
 * Issue 42: the field names of Redis hashes are named once, in
 * runtime/store/fields.ts. This test reads every .ts file under runtime/ (the Lua
 * scripts too: they live in template strings) and fails, naming file and line,
 * where a stored field name of those tables is spelled as a quoted literal in a
 * place where it names a hash field.
 *
 * Short names (`'n'`, `'in'`, `'s'`, `"hash"`, `"createdAt"`, `'task'`) are also
 * ordinary strings (status values, op kinds, JSON keys, ARG fields), so a literal
 * counts only where it is a hash field:
 *
 * TypeScript (the syntax tree):
 *  - an argument, after the key, of a hash command of ioredis (`hget`, `hmget`,
 *    `hset`, `hsetnx`, `hdel`, `hincrby`, `hincrbyfloat`, `hexists`, …, with or
 *    without `Buffer`), in a chain or a pipeline: a string, the keys of an object
 *    literal (plain, quoted or shorthand), the elements of an array literal or a
 *    spread; an identifier passed there is followed to the `const`/`let` it names
 *    in the file (by lexical scope: its object keys or array elements) and to the
 *    `x.key =` and `x["key"] =` assignments in the block that declares it;
 *  - what an HGETALL answered: the properties read (`x.key`, `x["key"]`, or
 *    destructured) of a variable declared as the result of `hgetall`, within
 *    the block that declares it.
 *
 * Lua (the template literals that hold `redis.call(` or a `local`; a string
 * spanning a `${…}` is no literal):
 *  - an argument, after the command, of `redis.call('H…', …)`;
 *  - an element of a table constructor, not a keyed value (`{'st', 1}` is a
 *    field/value list for a later HSET; `{status = 'RUNNING'}` is not), except
 *    the names list of `hmgetNamed(key, FIELDS, {…})`, whose strings are names
 *    of the table, not stored fields;
 *  - a string appended to a list (`t[#t + 1] = 'out'`);
 *  - a string followed by `..` (a field name built from a prefix: a state slice).
 * Comparisons (`o.op == 'task'`), reply kinds, patterns and command names are
 * not looked at.
 *
 * Flows the rule cannot follow (a field list returned by a function, an object
 * handed to a script as ARG) are written through the tables' helpers
 * (`toStored`, `fromStored`, `storedFields`, `byName`) instead.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const FIELDS_FILE = "runtime/store/fields.ts";

/** Every stored field name, with where the tables define it (for the message). */
const STORED = new Map<string, string[]>();
for (const [kind, table] of Object.entries(FIELD_TABLES)) {
  for (const [name, field] of Object.entries(table)) {
    STORED.set(field, [...(STORED.get(field) ?? []), `${kind.toUpperCase()}_FIELDS.${name}`]);
  }
}

interface Finding {
  file: string;
  line: number;
  literal: string;
  where: string;
}

const HASH_COMMAND = /^h(get|mget|set|setnx|mset|del|incrby|incrbyfloat|exists|strlen)(Buffer)?$/;
const HGETALL = /^hgetall(Buffer)?$/;

/** The findings of one file (`file` as it is named in messages). */
function findLiterals(file: string, text: string): Finding[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Finding[] = [];
  const report = (literal: string, at: number, where: string) => {
    if (!STORED.has(literal)) return;
    const line = source.getLineAndCharacterOfPosition(at).line + 1;
    found.push({ file, line, literal, where });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      if (HASH_COMMAND.test(method)) {
        for (const arg of node.arguments.slice(1)) hashArgument(source, arg, method, report);
      }
    }
    if (ts.isVariableDeclaration(node) && node.initializer && isHgetall(node.initializer)) {
      hgetallReads(source, node, report);
    }
    if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      luaLiterals(source, node, report);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

type Report = (literal: string, at: number, where: string) => void;

function unwrap(node: ts.Expression): ts.Expression {
  while (
    ts.isAsExpression(node) ||
    ts.isSatisfiesExpression(node) ||
    ts.isParenthesizedExpression(node) ||
    ts.isTypeAssertionExpression(node) ||
    ts.isAwaitExpression(node)
  )
    node = node.expression;
  return node;
}

function propertyName(name: ts.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)
    ? name.text
    : undefined;
}

/** A field written or read by a hash command: the argument, and what an identifier holds. */
function hashArgument(
  source: ts.SourceFile,
  arg: ts.Expression,
  method: string,
  report: Report,
  seen = new Set<string>(),
): void {
  const node = unwrap(ts.isSpreadElement(arg) ? arg.expression : arg);
  const where = `${method} argument`;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
    report(node.text, node.getStart(source), where);
  } else if (ts.isObjectLiteralExpression(node)) {
    for (const p of node.properties) {
      const name =
        ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)
          ? propertyName(p.name)
          : undefined;
      if (name !== undefined) report(name, p.getStart(source), `key of an object ${method} writes`);
    }
  } else if (ts.isArrayLiteralExpression(node)) {
    for (const e of node.elements) hashArgument(source, e, method, report, seen);
  } else if (ts.isConditionalExpression(node)) {
    hashArgument(source, node.whenTrue, method, report, seen);
    hashArgument(source, node.whenFalse, method, report, seen);
  } else if (ts.isIdentifier(node) && !seen.has(node.text)) {
    seen.add(node.text);
    followIdentifier(source, node, method, report, seen);
  }
}

/**
 * The `const`/`let` declaration `name` refers to at `from`, by lexical scope
 * (undefined when it is a parameter, or declared in no enclosing block).
 */
function declarationOf(from: ts.Node, name: string): ts.VariableDeclaration | undefined {
  for (let scope = from.parent; scope; scope = scope.parent) {
    if (ts.isFunctionLike(scope) && scope.parameters.some((p) => p.name.getText() === name))
      return undefined;
    if (ts.isBlock(scope) || ts.isSourceFile(scope)) {
      for (const statement of scope.statements) {
        if (!ts.isVariableStatement(statement)) continue;
        const found = statement.declarationList.declarations.find(
          (d) => ts.isIdentifier(d.name) && d.name.text === name,
        );
        if (found) return found;
      }
    }
  }
  return undefined;
}

/** What the identifier `at` holds: its declaration, and the properties assigned to it there. */
function followIdentifier(
  source: ts.SourceFile,
  at: ts.Identifier,
  method: string,
  report: Report,
  seen: Set<string>,
): void {
  const decl = declarationOf(at, at.text);
  if (!decl?.initializer) return;
  hashArgument(source, decl.initializer, method, report, seen);
  const visit = (node: ts.Node): void => {
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      (ts.isPropertyAccessExpression(node.left) || ts.isElementAccessExpression(node.left)) &&
      ts.isIdentifier(node.left.expression) &&
      node.left.expression.text === at.text
    ) {
      const key = ts.isPropertyAccessExpression(node.left)
        ? node.left.name.text
        : ts.isStringLiteral(node.left.argumentExpression)
          ? node.left.argumentExpression.text
          : undefined;
      if (key !== undefined)
        report(key, node.left.getStart(source), `field set on what ${method} writes`);
    }
    ts.forEachChild(node, visit);
  };
  visit(decl.parent.parent.parent);
}

function isHgetall(initializer: ts.Expression): boolean {
  const node = unwrap(initializer);
  return (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    HGETALL.test(node.expression.name.text)
  );
}

/** The fields read of an HGETALL's answer, in the block that declares it. */
function hgetallReads(source: ts.SourceFile, decl: ts.VariableDeclaration, report: Report): void {
  const where = "field read of an HGETALL";
  if (ts.isObjectBindingPattern(decl.name)) {
    for (const e of decl.name.elements) {
      const key = e.propertyName ? propertyName(e.propertyName) : (e.name as ts.Identifier).text;
      if (key !== undefined) report(key, e.getStart(source), where);
    }
    return;
  }
  if (!ts.isIdentifier(decl.name)) return;
  const name = decl.name.text;
  let scope: ts.Node = decl;
  while (!ts.isBlock(scope) && !ts.isSourceFile(scope)) scope = scope.parent;
  const visit = (node: ts.Node): void => {
    if (
      (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === name
    ) {
      const key = ts.isPropertyAccessExpression(node)
        ? node.name.text
        : ts.isStringLiteral(node.argumentExpression)
          ? node.argumentExpression.text
          : undefined;
      if (key !== undefined) report(key, node.getStart(source), where);
    }
    ts.forEachChild(node, visit);
  };
  visit(scope);
}

/** Where a `${…}` was: no Lua string that holds one is a literal. */
const HOLE = "\u0001";

/** The Lua of a template literal, read as Lua (see the header for the contexts). */
function luaLiterals(
  source: ts.SourceFile,
  node: ts.NoSubstitutionTemplateLiteral | ts.TemplateExpression,
  report: Report,
): void {
  // The raw text of each part, and where in the file it starts (after ` or }).
  const parts: { text: string; at: number }[] = ts.isNoSubstitutionTemplateLiteral(node)
    ? [{ text: node.rawText ?? "", at: node.getStart(source) + 1 }]
    : [
        { text: node.head.rawText ?? "", at: node.head.getStart(source) + 1 },
        ...node.templateSpans.map((s) => ({
          text: s.literal.rawText ?? "",
          at: s.literal.getStart(source) + 1,
        })),
      ];
  let text = "";
  const starts: { lua: number; file: number }[] = [];
  for (const [i, part] of parts.entries()) {
    if (i > 0) text += HOLE;
    starts.push({ lua: text.length, file: part.at });
    text += part.text;
  }
  if (!/redis\.call\(|(^|\n)\s*local\s/.test(text)) return;
  const fileOffset = (lua: number) => {
    const s = starts.filter((p) => p.lua <= lua).at(-1)!;
    return s.file + (lua - s.lua);
  };
  for (const { literal, offset, where } of luaStrings(text)) {
    report(literal, fileOffset(offset), where);
  }
}

interface Frame {
  bracket: "(" | "{" | "[";
  /** For `(`: the name called (`redis.call`, `hmgetNamed`…). */
  call: string;
  /** Commas seen so far at this level. */
  args: number;
  /** For `redis.call(`: its command. */
  command?: string;
  /** A `{` that is the names list of hmgetNamed. */
  names?: boolean;
}

/** The strings of a piece of Lua that are in a hash-field context. */
function luaStrings(lua: string): { literal: string; offset: number; where: string }[] {
  const out: { literal: string; offset: number; where: string }[] = [];
  const stack: Frame[] = [];
  let previous = ""; // the previous token: an identifier, a string ("'"), or punctuation
  let word = ""; // the previous identifier, when `previous` is one
  let i = 0;
  while (i < lua.length) {
    const c = lua[i]!;
    if (c === "-" && lua[i + 1] === "-") {
      while (i < lua.length && lua[i] !== "\n") i++;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1;
      let value = "";
      while (j < lua.length && lua[j] !== c && lua[j] !== "\n") {
        if (lua[j] === "\\") j++;
        value += lua[j] ?? "";
        j++;
      }
      const top = stack.at(-1);
      const rest = lua.slice(j + 1).trimStart();
      let where: string | undefined;
      if (top?.bracket === "(" && top.call === "redis.call") {
        if (top.args === 0) top.command = value;
        else if (/^h/i.test(top.command ?? "")) where = `${top.command} argument`;
      } else if (top?.bracket === "{" && !top.names && (previous === "{" || previous === ",")) {
        where = "element of a field list";
      }
      if (previous === "=" && /\[#[\w.]+\s*\+\s*1\]\s*=\s*$/.test(lua.slice(0, i)))
        where = "appended to a field list";
      if (rest.startsWith("..") && !rest.startsWith("...")) where ??= "prefix of a field name";
      if (where && !value.includes(HOLE)) out.push({ literal: value, offset: i, where });
      previous = "'";
      i = j + 1;
      continue;
    }
    const name = /^[A-Za-z_][\w.:]*/.exec(lua.slice(i, i + 200))?.[0];
    if (name) {
      previous = "id";
      word = name;
      i += name.length;
      continue;
    }
    if (c === "(" || c === "{" || c === "[") {
      const top = stack.at(-1);
      stack.push({
        bracket: c,
        call: c === "(" && previous === "id" ? word : "",
        args: 0,
        names: c === "{" && top?.call === "hmgetNamed" && top.args === 2,
      });
    } else if (c === ")" || c === "}" || c === "]") {
      stack.pop();
    } else if (c === ",") {
      const top = stack.at(-1);
      if (top) top.args++;
    }
    const two = lua.slice(i, i + 2);
    if (two === ".." || two === "==" || two === "~=" || two === "<=" || two === ">=") {
      previous = two;
      i += 2;
      continue;
    }
    previous = c;
    i++;
  }
  return out;
}

function runtimeFiles(dir = resolve(ROOT, "runtime")): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return runtimeFiles(path);
      return name.endsWith(".ts") ? [relative(ROOT, path)] : [];
    });
}

function show(findings: Finding[]): string[] {
  return findings.map(
    (f) =>
      `${f.file}:${f.line}: '${f.literal}' (${f.where}) — use ${STORED.get(f.literal)!.join(" or ")}`,
  );
}

describe("hash field names, named once (runtime/store/fields.ts)", () => {
  it("each table names each stored field once", () => {
    for (const table of Object.values(FIELD_TABLES)) {
      const fields = Object.values(table);
      expect(new Set(fields).size).toBe(fields.length);
    }
  });

  it("the rule finds a literal in every context it names, and nothing else", () => {
    const text = [
      /* 1 */ `const a = await redis.hget(key, "st");`,
      /* 2 */ `pipeline.hmget(key, "hc", name, ...["sm"]);`,
      /* 3 */ `redis.multi().hset(key, { nm: 1, "t0": 2, createdAt, [X.status]: 3 });`,
      /* 4 */ `const fields = { pv: 1 };`,
      /* 5 */ `fields.al = 2; fields["rf"] = 3; other.fk = 4;`,
      /* 6 */ `await redis.hset(key, fields);`,
      /* 7 */ `const f = await redis.hgetall(key);`,
      /* 8 */ `if (f.ps && f["rc"] && g.rd) {}`,
      /* 9 */ "const LUA = `",
      /* 10 */ "local x = redis.call('HGET', KEY.run, 'q')",
      /* 11 */ "if o.op == 'task' then reply('run', {status = 'in'}) end",
      /* 12 */ "putState(key, state, nil, {'q', 0}); t[#t + 1] = 'out'",
      /* 13 */ "local r = hmgetNamed(key, APPROVAL, {'status', 'task', 'run'})",
      /* 14 */ "local s = 's' .. i; local j = '${'x'}' .. i; redis.call('ZADD', k, 'n', m)",
      /* 15 */ "-- a comment: redis.call('HGET', k, 'st')",
      /* 16 */ "`;",
      /* 17 */ `const notLua = \`{"hash":"\${x}"}\`; const ok = { hash: 1, createdAt: 2 };`,
      /* 18 */ `function f(alias) { redis.hsetnx(key, alias, 1); } function g() { const alias = { by: 1 }; }`,
    ].join("\n");
    const found = findLiterals("sample.ts", text).map((f) => `${f.line}:${f.literal}`);
    expect(found.sort()).toEqual(
      [
        "1:st",
        "2:hc",
        "2:sm",
        "3:nm",
        "3:t0",
        "3:createdAt",
        "4:pv",
        "5:al",
        "5:rf",
        "8:ps",
        "8:rc",
        "10:q",
        "12:q",
        "12:out",
        "14:s",
      ].sort(),
    );
  });

  it("a real runtime file with a literal fails, naming file and line", () => {
    const file = "runtime/executions/purge.ts";
    const text = readFileSync(resolve(ROOT, file), "utf8").replace(
      "EXECUTION_FIELDS.status",
      '"st"',
    );
    const findings = findLiterals(file, text);
    expect(show(findings)).toEqual([
      expect.stringMatching(/^runtime\/executions\/purge\.ts:\d+: 'st' \(hget argument\)/),
    ]);
  });

  it("no stored field name is spelled outside fields.ts", () => {
    const findings = runtimeFiles()
      .filter((file) => file !== FIELDS_FILE)
      .flatMap((file) => findLiterals(file, readFileSync(resolve(ROOT, file), "utf8")));
    expect(show(findings)).toEqual([]);
  });
});
