/**
 * Standard base64 (RFC 4648, with padding), written out because the engine may
 * not import node:buffer. Decoding is as strict as Java's Base64.getDecoder():
 * only the standard alphabet, padding optional but never in the middle.
 */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const LOOKUP = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) LOOKUP[ALPHABET.charCodeAt(i)] = i;

export function encodeBase64(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out +=
      ALPHABET[n >>> 18]! +
      ALPHABET[(n >>> 12) & 63]! +
      ALPHABET[(n >>> 6) & 63]! +
      ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + "==";
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + ALPHABET[(n >>> 6) & 63]! + "=";
  }
  return out;
}

/** The decoded bytes, or undefined when `text` is not valid base64. */
export function decodeBase64(text: string): Uint8Array | undefined {
  let end = text.length;
  if (end > 0 && text[end - 1] === "=") end--;
  if (end > 0 && text[end - 1] === "=") end--;
  const padding = text.length - end;
  if (padding > 0 && text.length % 4 !== 0) return undefined;
  if (end % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((end * 3) / 4));
  let bits = 0;
  let buffer = 0;
  let o = 0;
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? LOOKUP[code]! : -1;
    if (value < 0) return undefined;
    buffer = (buffer << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (buffer >>> bits) & 0xff;
    }
  }
  return out.subarray(0, o);
}
