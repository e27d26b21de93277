import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";

/** Issue 42's limits on runtime/: rooms a newcomer can walk. */
export const LIMITS = { filesPerFolder: 15, linesPerFile: 450, linesPerFunction: 80 } as const;

const ROOT = resolve(import.meta.dirname, "../..");

export interface Shape {
  folders: { path: string; files: number }[];
  longFiles: { path: string; lines: number }[];
  longFunctions: { path: string; line: number; name: string; lines: number }[];
}

/** Every folder under `dir` (its own files counted, not its subfolders'), and what is too long. */
export function shapeOf(dir: string): Shape {
  const shape: Shape = { folders: [], longFiles: [], longFunctions: [] };
  walk(resolve(ROOT, dir), shape);
  shape.longFiles.sort((a, b) => b.lines - a.lines);
  shape.longFunctions.sort((a, b) => b.lines - a.lines);
  return shape;
}

function walk(dir: string, shape: Shape): void {
  const entries = readdirSync(dir).sort();
  const files = entries.filter((e) => statSync(join(dir, e)).isFile());
  shape.folders.push({ path: relative(ROOT, dir), files: files.length });
  for (const name of files) {
    if (!name.endsWith(".ts")) continue;
    const path = join(dir, name);
    const text = readFileSync(path, "utf8");
    const lines = text.split("\n").length;
    const rel = relative(ROOT, path);
    if (lines > LIMITS.linesPerFile) shape.longFiles.push({ path: rel, lines });
    for (const fn of functionsOf(rel, text)) {
      if (fn.lines > LIMITS.linesPerFunction) shape.longFunctions.push(fn);
    }
  }
  for (const name of entries) {
    if (statSync(join(dir, name)).isDirectory()) walk(join(dir, name), shape);
  }
}

/** Each function, method, arrow and accessor with a body, by the lines its body spans. */
function functionsOf(path: string, text: string) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: { path: string; line: number; name: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ path, line: start + 1, name: nameOf(node), lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name))
    return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name))
    return parent.name.text;
  return "(anonymous)";
}
