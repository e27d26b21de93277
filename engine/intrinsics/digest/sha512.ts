import { padMessage } from "./padding.js";

/**
 * SHA-512 and SHA-384 (FIPS 180-4), lowercase hex. 64-bit words are kept as
 * (high, low) pairs of 32-bit numbers; BigInt is used only once, to derive the
 * constants from their definition (fractional parts of cube and square roots
 * of primes) instead of typing 100 hex literals.
 */
const MASK64 = (1n << 64n) - 1n;

function integerRoot(n: bigint, k: bigint): bigint {
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / Number(k)));
  for (;;) {
    const y = ((k - 1n) * x + n / x ** (k - 1n)) / k;
    if (y >= x) return x;
    x = y;
  }
}

function firstPrimes(count: number): number[] {
  const primes: number[] = [];
  for (let n = 2; primes.length < count; n++) if (primes.every((p) => n % p !== 0)) primes.push(n);
  return primes;
}

/** The first 64 fractional bits of the k-th root of p, split into [hi, lo]. */
function rootFraction(p: number, k: bigint): [number, number] {
  const value = integerRoot(BigInt(p) << (64n * k), k) & MASK64;
  return [Number(value >> 32n), Number(value & 0xffffffffn)];
}

const PRIMES = firstPrimes(80);
const K = PRIMES.map((p) => rootFraction(p, 3n));
const INIT_512 = PRIMES.slice(0, 8).map((p) => rootFraction(p, 2n));
const INIT_384 = firstPrimes(16)
  .slice(8)
  .map((p) => rootFraction(p, 2n));

// Rotations and shift of a 64-bit (hi, lo) pair, high and low halves apart.
function rotrHi(hi: number, lo: number, n: number): number {
  return n < 32 ? (hi >>> n) | (lo << (32 - n)) : (lo >>> (n - 32)) | (hi << (64 - n));
}
function rotrLo(hi: number, lo: number, n: number): number {
  return n < 32 ? (lo >>> n) | (hi << (32 - n)) : (hi >>> (n - 32)) | (lo << (64 - n));
}
function shrLo(hi: number, lo: number, n: number): number {
  return (lo >>> n) | (hi << (32 - n));
}

function digest(message: Uint8Array, init: readonly [number, number][], outWords: number): string {
  const data = padMessage(message, 128, 16, false);
  const view = new DataView(data.buffer);
  const hHi = init.map(([hi]) => hi);
  const hLo = init.map(([, lo]) => lo);
  const wHi = new Int32Array(80);
  const wLo = new Int32Array(80);
  for (let block = 0; block < data.length; block += 128) {
    for (let i = 0; i < 16; i++) {
      wHi[i] = view.getInt32(block + i * 8, false);
      wLo[i] = view.getInt32(block + i * 8 + 4, false);
    }
    for (let i = 16; i < 80; i++) {
      const xh = wHi[i - 15]!;
      const xl = wLo[i - 15]!;
      const s0h = rotrHi(xh, xl, 1) ^ rotrHi(xh, xl, 8) ^ (xh >>> 7);
      const s0l = rotrLo(xh, xl, 1) ^ rotrLo(xh, xl, 8) ^ shrLo(xh, xl, 7);
      const yh = wHi[i - 2]!;
      const yl = wLo[i - 2]!;
      const s1h = rotrHi(yh, yl, 19) ^ rotrHi(yh, yl, 61) ^ (yh >>> 6);
      const s1l = rotrLo(yh, yl, 19) ^ rotrLo(yh, yl, 61) ^ shrLo(yh, yl, 6);
      const lo = (wLo[i - 16]! >>> 0) + (s0l >>> 0) + (wLo[i - 7]! >>> 0) + (s1l >>> 0);
      wLo[i] = lo;
      wHi[i] = wHi[i - 16]! + s0h + wHi[i - 7]! + s1h + Math.floor(lo / 0x100000000);
    }
    let [ah, bh, ch, dh, eh, fh, gh, hh] = hHi as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    let [al, bl, cl, dl, el, fl, gl, hl] = hLo as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    for (let i = 0; i < 80; i++) {
      const S1h = rotrHi(eh, el, 14) ^ rotrHi(eh, el, 18) ^ rotrHi(eh, el, 41);
      const S1l = rotrLo(eh, el, 14) ^ rotrLo(eh, el, 18) ^ rotrLo(eh, el, 41);
      const chh = (eh & fh) ^ (~eh & gh);
      const chl = (el & fl) ^ (~el & gl);
      const [kh, kl] = K[i]!;
      const t1lo = (hl >>> 0) + (S1l >>> 0) + (chl >>> 0) + kl + (wLo[i]! >>> 0);
      const t1h = (hh + S1h + chh + kh + wHi[i]! + Math.floor(t1lo / 0x100000000)) | 0;
      const t1l = t1lo >>> 0;
      const S0h = rotrHi(ah, al, 28) ^ rotrHi(ah, al, 34) ^ rotrHi(ah, al, 39);
      const S0l = rotrLo(ah, al, 28) ^ rotrLo(ah, al, 34) ^ rotrLo(ah, al, 39);
      const majh = (ah & bh) ^ (ah & ch) ^ (bh & ch);
      const majl = (al & bl) ^ (al & cl) ^ (bl & cl);
      const t2lo = (S0l >>> 0) + (majl >>> 0);
      const t2h = (S0h + majh + Math.floor(t2lo / 0x100000000)) | 0;
      const t2l = t2lo >>> 0;
      hh = gh;
      hl = gl;
      gh = fh;
      gl = fl;
      fh = eh;
      fl = el;
      const elo = (dl >>> 0) + t1l;
      eh = (dh + t1h + Math.floor(elo / 0x100000000)) | 0;
      el = elo >>> 0;
      dh = ch;
      dl = cl;
      ch = bh;
      cl = bl;
      bh = ah;
      bl = al;
      const alo = t1l + t2l;
      ah = (t1h + t2h + Math.floor(alo / 0x100000000)) | 0;
      al = alo >>> 0;
    }
    const addHi = [ah, bh, ch, dh, eh, fh, gh, hh];
    const addLo = [al, bl, cl, dl, el, fl, gl, hl];
    for (let i = 0; i < 8; i++) {
      const lo = (hLo[i]! >>> 0) + (addLo[i]! >>> 0);
      hHi[i] = (hHi[i]! + addHi[i]! + Math.floor(lo / 0x100000000)) | 0;
      hLo[i] = lo >>> 0;
    }
  }
  let out = "";
  for (let i = 0; i < outWords; i++) {
    out +=
      (hHi[i]! >>> 0).toString(16).padStart(8, "0") + (hLo[i]! >>> 0).toString(16).padStart(8, "0");
  }
  return out;
}

export function sha512Hex(message: Uint8Array): string {
  return digest(message, INIT_512, 8);
}

export function sha384Hex(message: Uint8Array): string {
  return digest(message, INIT_384, 6);
}
