import { UsageError } from "./command.js";

/**
 * A small argv parser: `--flag`, `--name value`, `--name=value`, and positionals.
 * Unknown options are usage errors (exit 2), so typos never pass silently.
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
    if (!arg.startsWith("--") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!known.has(name)) throw new UsageError(`unknown option '--${name}'`);
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
