import { UsageError, type Action } from "./command.js";

/**
 * A small argv parser: `--flag`, `--name value`, `--name=value`, and positionals.
 * Unknown options are usage errors (exit 2) that suggest the nearest known one, so
 * typos never pass silently; `-name` (one dash) is taken for a mistyped option too.
 */
export interface ParsedArgs {
  flags: Set<string>;
  values: Map<string, string>;
  /** Options given with `repeatable`, each value in order (`--sub A=1 --sub B=2`). */
  lists: Map<string, string[]>;
  positionals: string[];
}

export function parseArgs(
  argv: string[],
  spec: { flags?: string[]; values?: string[]; repeatable?: string[] },
): ParsedArgs {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const lists = new Map<string, string[]>();
  const positionals: string[] = [];
  const known = new Set([
    ...(spec.flags ?? []),
    ...(spec.values ?? []),
    ...(spec.repeatable ?? []),
  ]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (/^-[A-Za-z]/.test(arg)) {
      const options = [...known].map((k) => `--${k}`);
      throw new UsageError(`unknown option '${arg}'${didYouMean(arg.slice(1), options)}`);
    }
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!known.has(name)) {
      const options = [...known].map((k) => `--${k}`);
      throw new UsageError(`unknown option '--${name}'${didYouMean(`--${name}`, options)}`);
    }
    if (spec.values?.includes(name) || spec.repeatable?.includes(name)) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UsageError(`option '--${name}' needs a value`);
      if (spec.repeatable?.includes(name)) lists.set(name, [...(lists.get(name) ?? []), value]);
      else values.set(name, value);
    } else {
      if (eq > 0) throw new UsageError(`option '--${name}' takes no value`);
      flags.add(name);
    }
  }
  return { flags, values, lists, positionals };
}

export function numberOption(args: ParsedArgs, name: string, min: number): number | undefined {
  const raw = args.values.get(name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new UsageError(`option '--${name}' needs a number of at least ${min}, got '${raw}'`);
  }
  return value;
}

/** An integer setting from an option or the environment (`raw`), within [min, max]. */
export function integerSetting(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return value;
}

/**
 * ` (did you mean X?)` for a mistyped word, naming the known words it is nearest to,
 * or "" when none is near: the few it begins (`--stat`: `--state-machine` or
 * `--status`), else those within an edit distance of 1, or 2 for words of 5 or more.
 */
export function didYouMean(typed: string, known: readonly string[]): string {
  const bare = (word: string): string => word.replace(/^-+/, "");
  const word = bare(typed);
  const prefixed = known.filter((k) => word.length >= 3 && bare(k).startsWith(word));
  const limit = word.length >= 5 ? 2 : 1;
  let best = Infinity;
  let nearest: string[] = [];
  for (const candidate of known) {
    const d = editDistance(word, bare(candidate));
    if (d > limit || d > best) continue;
    if (d < best) [best, nearest] = [d, []];
    nearest.push(candidate);
  }
  const named = prefixed.length > 0 && prefixed.length <= 3 ? prefixed : nearest;
  return named.length > 0 ? ` (did you mean ${named.join(" or ")}?)` : "";
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (`inptu`). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]![j]!;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, at(i - 2, j - 2) + 1);
      }
      rows[i]![j] = d;
    }
  }
  return at(a.length, b.length);
}

/**
 * The usage error of a command group given no action, or one it does not have: with
 * none, the actions one per line with their summaries (as `git worktree` alone lists
 * its subcommands, a usage error); with a typo, the nearest action.
 */
export function actionError(actions: readonly Action[], given: string | undefined): UsageError {
  const names = actions.map((a) => a.name);
  if (given === undefined) {
    const width = Math.max(...names.map((n) => n.length));
    const lines = actions.map((a) => `  ${a.name.padEnd(width)}  ${a.summary}`);
    return new UsageError(`needs an action, one of:\n${lines.join("\n")}`);
  }
  const all =
    names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)!}` : (names[0] ?? "");
  return new UsageError(`unknown action '${given}'${didYouMean(given, names) || `: ${all}`}`);
}
