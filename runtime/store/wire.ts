import { Packr } from "msgpackr";

/**
 * What crosses between TypeScript and the Lua scripts: each script takes ONE
 * argument, a MessagePack map of named fields (decoded in Lua with Redis's
 * `cmsgpack`, as BullMQ passes its job options), and answers with one
 * MessagePack map whose `kind` names the reply. Nothing is counted by position.
 *
 * MessagePack rather than JSON: the fields carry JSON texts (events, states,
 * outputs) that Lua stores as they are; JSON would escape them a second time
 * on the way in and Lua would unescape them, for nothing.
 *
 * Numbers: integers up to 2^53 travel exactly (timestamps in ms, sequence
 * numbers). Lua turns a number it passes to a Redis command into text with up to
 * 17 significant digits, so a decimal whose exact text matters travels as a string.
 */
const packr = new Packr({
  useRecords: false,
  // An optional field left undefined is simply absent in Lua (nil).
  encodeUndefinedAsNil: true,
  mapsAsObjects: true,
  // cmsgpack encodes integers past 2^32 as 64-bit; they are ms timestamps, not BigInts.
  int64AsType: "number",
});

export function encodeArgs(args: unknown): Buffer {
  return packr.pack(args);
}

export function decodeReply(reply: Buffer): unknown {
  return packr.unpack(reply);
}
