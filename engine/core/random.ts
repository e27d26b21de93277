/**
 * Randomness for the pure step. `States.UUID`, `States.MathRandom`, `$random()`
 * and retry jitter must replay identically, so every draw is derived from the
 * execution's seed and a counter kept in the serializable execution state.
 */
export interface RandomSource {
  /** A float in [0, 1). */
  next(): number;
  /** A version-4 UUID built from the same stream. */
  uuid(): string;
  /** How many draws were made so far; the step stores it back into the execution state. */
  readonly counter: number;
}

/** cyrb53-style string hash, seeded, 53 bits. */
function hash53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

export function seededRandom(seed: string, startCounter = 0): RandomSource {
  let counter = startCounter;
  const draw = (): number => hash53(`${seed}:${counter++}`, 0x9e3779b9) / 2 ** 53;
  return {
    next: draw,
    uuid() {
      let hex = "";
      while (hex.length < 32)
        hex += Math.floor(draw() * 2 ** 32)
          .toString(16)
          .padStart(8, "0");
      const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    },
    get counter() {
      return counter;
    },
  };
}

/**
 * The stream of one step, seeded on its first draw: most steps draw nothing, and
 * seeding builds a string. A class rather than closures, since one exists per step.
 */
export class DeferredRandom implements RandomSource {
  private stream: RandomSource | undefined;

  constructor(
    private readonly seed: string,
    private readonly runId: string,
    private readonly start: number,
  ) {}

  next(): number {
    return this.draws().next();
  }

  uuid(): string {
    return this.draws().uuid();
  }

  get counter(): number {
    return this.stream ? this.stream.counter : this.start;
  }

  private draws(): RandomSource {
    this.stream ??= seededRandom(`${this.seed}/${this.runId}`, this.start);
    return this.stream;
  }
}
