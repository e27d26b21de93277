/**
 * Merkle–Damgård padding shared by MD5 and the SHA family: append 0x80, zeros,
 * then the message length in bits (`lengthBytes` wide, big or little endian).
 */
export function padMessage(
  message: Uint8Array,
  blockBytes: number,
  lengthBytes: number,
  littleEndian: boolean,
): Uint8Array {
  const total = Math.ceil((message.length + 1 + lengthBytes) / blockBytes) * blockBytes;
  const padded = new Uint8Array(total);
  padded.set(message);
  padded[message.length] = 0x80;
  // Bit length as a 53-bit safe integer: inputs are capped at 10,000 characters.
  let bits = message.length * 8;
  for (let i = 0; i < 8; i++) {
    const index = littleEndian ? total - lengthBytes + i : total - 1 - i;
    padded[index] = bits % 256;
    bits = Math.floor(bits / 256);
  }
  return padded;
}

export function toHex(words: readonly number[] | Uint32Array, littleEndian: boolean): string {
  let out = "";
  for (const word of words) {
    if (littleEndian) {
      for (let i = 0; i < 4; i++) out += ((word >>> (8 * i)) & 0xff).toString(16).padStart(2, "0");
    } else {
      out += (word >>> 0).toString(16).padStart(8, "0");
    }
  }
  return out;
}
