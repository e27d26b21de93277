/**
 * Random bytes for seeds, nonces, task tokens and trace ids, drawn from a pool
 * that is refilled 4 KiB at a time. Each draw from the system's generator costs
 * a system call whatever its size (7 µs for 16 bytes, 10 µs for 4 KiB, measured
 * on the 2-core CI machine), and an execution start made three of them: pooled,
 * 256 draws of 16 bytes share one. The bytes are the system CSPRNG's, each handed
 * out once (its slot is zeroed as it is taken), as Node pools randomUUID's.
 */
const POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let next = 0;

export function randomBytes(n: number): Uint8Array {
  if (n > POOL_BYTES / 4) return globalThis.crypto.getRandomValues(new Uint8Array(n));
  if (next + n > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_BYTES));
    next = 0;
  }
  const out = pool.slice(next, next + n);
  pool.fill(0, next, next + n);
  next += n;
  return out;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

export function randomHex(n: number): string {
  let text = "";
  for (const b of randomBytes(n)) text += HEX[b];
  return text;
}
