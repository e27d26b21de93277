import { variable } from "./variables.js";

/** The environment as read once at start: names to values (unset names absent). */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * A configuration value that cannot be used. The CLI prints `message` as its one
 * line and exits 2; it never reaches a stack trace.
 */
export class ConfigError extends Error {
  constructor(
    /** The variable (or `--flag/VARIABLE`) at fault. */
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = "ConfigError";
  }
}

/**
 * Reads settings from an environment and from flags that override it, each
 * value validated once. A flag and its variable are one setting: the flag wins.
 * Every name must be in the catalogue (variables.ts), so nothing is read that
 * the README does not document.
 */
export class Reader {
  constructor(
    readonly env: Environment,
    private readonly flags: ReadonlyMap<string, string> = new Map(),
  ) {}

  /** The raw text of a setting: the flag's when given, else the variable's; "" counts as unset. */
  raw(name: string, flag?: string): string | undefined {
    variable(name);
    const fromFlag = flag !== undefined ? this.flags.get(flag) : undefined;
    const value = fromFlag ?? this.env[name];
    return value === undefined || value === "" ? undefined : value;
  }

  /** `--flag/NAME` when the setting has a flag, for messages. */
  label(name: string, flag?: string): string {
    return flag !== undefined ? `--${flag}/${name}` : name;
  }

  string(name: string, fallback: string, flag?: string): string {
    return this.raw(name, flag) ?? fallback;
  }

  optionalString(name: string, flag?: string): string | undefined {
    return this.raw(name, flag);
  }

  /** A whole number within [min, max]. */
  integer(
    name: string,
    fallback: number,
    range: { min: number; max?: number },
    flag?: string,
  ): number {
    const raw = this.raw(name, flag);
    if (raw === undefined) return fallback;
    const value = Number(raw.trim());
    const max = range.max ?? Number.MAX_SAFE_INTEGER;
    if (!/^\s*-?\d+\s*$/.test(raw) || value < range.min || value > max) {
      const expected =
        range.max === undefined
          ? `a whole number of at least ${range.min}`
          : `a whole number from ${range.min} to ${range.max}`;
      throw new ConfigError(
        this.label(name, flag),
        `${this.label(name, flag)}='${raw}': expected ${expected}`,
      );
    }
    return value;
  }

  optionalInteger(
    name: string,
    range: { min: number; max?: number },
    flag?: string,
  ): number | undefined {
    return this.raw(name, flag) === undefined ? undefined : this.integer(name, 0, range, flag);
  }

  /** A number (fractions allowed) of at least `min`. */
  number(name: string, fallback: number, min: number): number {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(value) || value < min) {
      throw new ConfigError(name, `${name}='${raw}': expected a number of at least ${min}`);
    }
    return value;
  }

  oneOf<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    if (!(choices as readonly string[]).includes(raw)) {
      throw new ConfigError(name, `${name}='${raw}': expected one of ${choices.join(", ")}`);
    }
    return raw as T;
  }

  /** A value matching `pattern`, `expected` saying what in words. */
  matching(name: string, fallback: string, pattern: RegExp, expected: string): string {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    if (!pattern.test(raw)) throw new ConfigError(name, `${name}='${raw}': expected ${expected}`);
    return raw;
  }

  /** A value handed to a parser of its domain; what the parser throws names the variable. */
  parsed<T>(name: string, parse: (raw: string | undefined) => T, flag?: string): T {
    const raw = this.raw(name, flag);
    try {
      return parse(raw);
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      const message = (err as Error).message;
      const label = this.label(name, flag);
      throw new ConfigError(label, message.includes(name) ? message : `${label}: ${message}`);
    }
  }
}
