import { isoTime } from "../../engine/core/timestamp.js";

/**
 * How run states, history events and journal entries are stored in Redis.
 *
 * A parked execution (an approval that waits for days) costs only what it
 * stores, and most of its JSON is the same AWS key names, ARNs and event types
 * over and over. The most frequent fragments are stored as one control
 * character (U+0001..U+001C), the next ones as U+001E and one printable
 * character, 32 hex digits after a quote as U+001E `Z` and their bytes in
 * base64url, and a quoted ISO timestamp as U+001D and its milliseconds in base
 * 36: `JSON.stringify` never emits a raw character below U+0020 (it escapes
 * them), so the substitution is exactly reversible. It shrinks a run
 * state or a history event by half for a couple of microseconds. (Deflate with a
 * preset dictionary shrinks a little more, but zlib's per-call setup costs about
 * 10 µs per value, which halved transition throughput.)
 *
 * Format: U+001F, then the text with fragments replaced. Anything else is plain
 * JSON, read as is (what this runtime stored before, or with
 * `STEPWISE_STORAGE=json`). Lua scripts never look inside these values: they
 * only store, move and compare them.
 *
 * The table is part of the stored format: changing an entry would misread every
 * value stored with it. A better table gets a new marker character, and
 * `unpack` keeps reading the old one.
 */
const V1 = "\u001f";
const TIME = "\u001d";
const MORE = "\u001e";

const ARN = "arn:aws:states:local:000000000000:execution:";
const ARN_DEFAULT = "arn:aws:states:us-east-1:123456789012:execution:";

/** The most frequent fragments: one character each, U+0001..U+001C. */
const SHORT_V1 = [
  // history events
  `{"id":`,
  `,"previousEventId":`,
  `,"timestamp":`,
  `,"type":"`,
  `StateEntered","stateEnteredEventDetails":{"name":"`,
  `StateExited","stateExitedEventDetails":{"name":"`,
  `","input":"`,
  `","output":"`,
  `\\"`,
  `ExecutionStarted","executionStartedEventDetails":{"input":"`,
  `","roleArn":"arn:aws:iam::000000000000:role/stepwise"}}`,
  `Scheduled","taskScheduledEventDetails":{"resourceType":"`,
  `Started","taskStartedEventDetails":{"resourceType":"`,
  `Succeeded","taskSucceededEventDetails":{"resourceType":"`,
  `","resource":"`,
  `","region":"local","parameters":"`,
  // run states
  `{"runId":"${ARN}`,
  `","scope":"`,
  `","status":"RUNNING","variables":{`,
  `},"random":`,
  `,"lastEventId":`,
  `,"serial":`,
  `,"current":{"name":"`,
  `,"enteredTime":`,
  `,"enteredEventId":`,
  `,"phase":{"kind":"`,
  // journal entries
  `","event":{"type":"`,
  `,"time":`,
] as const;

/** Less frequent ones: U+001E and one printable character. */
const LONG_V1 = [
  ARN,
  `,"eventId":`,
  `Continue"`,
  `,"nonce":"`,
  `ExecutionSucceeded","executionSucceededEventDetails":{"output":"`,
  `ExecutionFailed","executionFailedEventDetails":{"error":"`,
  `ExecutionAborted","executionAbortedEventDetails":{`,
  `MapIterationStarted","mapIterationStartedEventDetails":{"name":"`,
  `MapIterationSucceeded","mapIterationSucceededEventDetails":{"name":"`,
  `MapStateStarted","mapStateStartedEventDetails":{"length":`,
  `Failed","taskFailedEventDetails":{"resourceType":"`,
  `","error":"`,
  `","cause":"`,
  `,"index":`,
  `","taskId":"${ARN}`,
  `,"timerIds":[`,
  `,"token":"`,
  `,"retryCount":`,
  `"type":"ChildEnded","childRunId":"${ARN}`,
  `,"outcome":{"status":"SUCCEEDED","output":`,
  `"type":"TimerFired","timerId":"${ARN}`,
  `,"parent":{"runId":"${ARN}`,
  `Pass`,
  `Task`,
  `Choice`,
  `Wait`,
  `Parallel`,
  `Map`,
  // Appended (codes no value stored before them holds, so every stored value reads
  // as it did): ARNs under the region and account the runtime issues by default
  // (ids.ts; `local:000000000000` above was the old default), any other one in two
  // parts, and the journal's and the chain's own field names.
  `{"runId":"${ARN_DEFAULT}`,
  ARN_DEFAULT,
  `","taskId":"${ARN_DEFAULT}`,
  `"type":"ChildEnded","childRunId":"${ARN_DEFAULT}`,
  `"type":"TimerFired","timerId":"${ARN_DEFAULT}`,
  `,"parent":{"runId":"${ARN_DEFAULT}`,
  `arn:aws:states:`,
  `:execution:`,
  `,"hash":"`,
  `,"seed":"`,
  `,"operationKey":"`,
  // Appended: ExecutionStarted's end since events carry their chain hash after the
  // details, the callback resource of approvals and task tokens, written twice
  // (TaskScheduled, TaskStarted) by every parked execution, and the journal's Started.
  `","roleArn":"arn:aws:iam::000000000000:role/stepwise"}`,
  `stepwise","resource":"waitForTaskToken`,
  `stepwise","resource":"approval`,
  `Started","input":`,
] as const;

// Printable, and never a base-36 digit, so a timestamp's digits end unambiguously.
const LONG_KEYS = "!#$%&'()*+,-./:;<=>?@[]^_`{|}~ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/**
 * The last long key is no fragment: U+001E `Z` and 22 base64url characters are
 * 32 lowercase hex digits that followed a quote (a run's seed, an operation key,
 * a trace id), 8 characters fewer. A parked execution's run state holds two.
 */
const HEX = LONG_KEYS.at(-1)!;

if (SHORT_V1.length > 28 || LONG_V1.length > LONG_KEYS.length - 1) {
  throw new Error("codec: too many fragments for the token space");
}

const TOKEN_OF = new Map<string, string>([
  ...SHORT_V1.map((f, i) => [f, String.fromCharCode(i + 1)] as const),
  ...LONG_V1.map((f, i) => [f, MORE + LONG_KEYS[i]!] as const),
]);
const SHORT_OF: string[] = ["", ...SHORT_V1];
const LONG_OF = new Map<string, string>(LONG_V1.map((f, i) => [LONG_KEYS[i]!, f]));

// A quoted ISO timestamp as toISOString writes it: `"` U+001D base-36 ms `"`.
const ISO = String.raw`"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"`;
// 32 hex digits after a quote: a quote and digits followed by another, or digits
// right after a fragment that ends with a quote (`,"seed":"`). Every alternative
// starts with a literal: this costs pack about 10%, where a lookbehind cost 45%.
const HEX32 = "([0-9a-f]{32})";
// Longest first: where two fragments start at the same place, the longer wins.
const ENCODE = new RegExp(
  [
    ISO,
    `"${HEX32}(?=")`,
    `(?:${[...TOKEN_OF.keys()]
      .sort((a, b) => b.length - a.length)
      .map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("|")})${HEX32}?`,
  ].join("|"),
  "g",
);
const CONTROL = /[\u0000-\u001f]/;

/**
 * The last timestamp converted each way. The events of one step share their
 * timestamp, and a commit packs them together: most conversions are the last
 * one again, and each costs about a microsecond (Date.parse and toISOString).
 */
let lastIso = "";
let lastPacked = "";
let lastMs36 = "";
let lastUnpacked = "";

/**
 * 32 hex digits as the 22 base64url characters of their 16 bytes, and back: the
 * same text as Buffer's `base64url` (a test holds them to it), without a Buffer each.
 */
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const SEXTET = new Uint8Array(128);
for (let i = 0; i < 64; i++) SEXTET[B64.charCodeAt(i)] = i;
const nibble = (hex: string, i: number): number => {
  const c = hex.charCodeAt(i);
  return c <= 0x39 ? c - 0x30 : c - 0x57;
};

const B64_CODES = Uint8Array.from(B64, (c) => c.charCodeAt(0));
const HEX_CODES = new Uint16Array(24);
HEX_CODES[0] = MORE.charCodeAt(0);
HEX_CODES[1] = HEX.charCodeAt(0);

function hexCode(hex: string): string {
  // Three hex digits are 12 bits, two base64 characters.
  for (let i = 0, o = 2; i < 30; i += 3, o += 2) {
    const v = (nibble(hex, i) << 8) | (nibble(hex, i + 1) << 4) | nibble(hex, i + 2);
    HEX_CODES[o] = B64_CODES[v >> 6]!;
    HEX_CODES[o + 1] = B64_CODES[v & 63]!;
  }
  const last = (nibble(hex, 30) << 4) | nibble(hex, 31);
  HEX_CODES[22] = B64_CODES[last >> 2]!;
  HEX_CODES[23] = B64_CODES[(last & 3) << 4]!;
  return String.fromCharCode.apply(null, HEX_CODES as unknown as number[]);
}

const HEX_DIGITS = "0123456789abcdef";

function hexOf(code: string): string {
  let out = "";
  for (let i = 0; i < 20; i += 2) {
    const v = (SEXTET[code.charCodeAt(i) & 127]! << 6) | SEXTET[code.charCodeAt(i + 1) & 127]!;
    out += HEX_DIGITS[v >> 8]! + HEX_DIGITS[(v >> 4) & 15]! + HEX_DIGITS[v & 15]!;
  }
  const last =
    (SEXTET[code.charCodeAt(20) & 127]! << 2) | (SEXTET[code.charCodeAt(21) & 127]! >> 4);
  return out + HEX_DIGITS[last >> 4]! + HEX_DIGITS[last & 15]!;
}

function encodeMatch(
  match: string,
  iso: string | undefined,
  quotedHex: string | undefined,
  afterFragment: string | undefined,
): string {
  if (quotedHex !== undefined) return `"${hexCode(quotedHex)}`;
  if (afterFragment !== undefined)
    return TOKEN_OF.get(match.slice(0, -32))! + hexCode(afterFragment);
  if (iso === undefined) return TOKEN_OF.get(match)!;
  if (iso === lastIso) return lastPacked;
  const ms = Date.parse(iso);
  // Only what toISOString gives back exactly (not 2026-02-30, not year 0).
  const packed = ms >= 0 && isoTime(ms) === iso ? `"${TIME}${ms.toString(36)}"` : match;
  lastIso = iso;
  lastPacked = packed;
  return packed;
}

function isoOf(ms36: string): string {
  if (ms36 !== lastMs36) {
    lastUnpacked = isoTime(parseInt(ms36, 36));
    lastMs36 = ms36;
  }
  return lastUnpacked;
}

const isBase36 = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a);

/**
 * The inverse of the substitution, as a scan for control characters: twice as
 * fast as the regular expression it replaced, with the same result on any text.
 */
function decode(text: string, from: number): string {
  let out = "";
  let plain = from;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 || c === 0) continue;
    if (c === 0x1d) {
      let end = i + 1;
      while (end < text.length && isBase36(text.charCodeAt(end))) end++;
      if (end === i + 1) continue;
      out += text.slice(plain, i) + isoOf(text.slice(i + 1, end));
      plain = end;
      i = end - 1;
    } else if (c === 0x1e) {
      const key = text.charCodeAt(i + 1);
      // Any character but a line terminator follows (what `.` matched when this was a RegExp).
      if (Number.isNaN(key) || key === 0x0a || key === 0x0d || key === 0x2028 || key === 0x2029)
        continue;
      if (text[i + 1] === HEX) {
        out += text.slice(plain, i) + hexOf(text.slice(i + 2, i + 24));
        plain = i + 24;
        i += 23;
        continue;
      }
      out += text.slice(plain, i) + LONG_OF.get(text[i + 1]!)!;
      plain = i + 2;
      i++;
    } else if (c !== 0x1f) {
      out += text.slice(plain, i) + SHORT_OF[c]!;
      plain = i + 1;
    }
  }
  return out + text.slice(plain);
}

/**
 * `STEPWISE_STORAGE=json` stores plain JSON (readable with redis-cli, about 40%
 * more memory). Readers accept both, so the setting can change at any time.
 */
let PLAIN = false;

/** The process's storage format (config/: `STEPWISE_STORAGE`); set once at start. */
export function setStorageFormat(format: "compact" | "json"): void {
  PLAIN = format === "json";
}
const PACK_LIMIT = 8192;

/** `json` must be `JSON.stringify` output; anything else is stored as given. */
export function pack(json: string): string {
  // Past a few KB the data outweighs the key names, and the scan costs more than it
  // saves (a big Map's parent state is rewritten on every child's end).
  if (PLAIN || json.length > PACK_LIMIT || CONTROL.test(json)) return json;
  return V1 + json.replace(ENCODE, encodeMatch);
}

export function unpack(stored: Buffer | string): string {
  const text = typeof stored === "string" ? stored : stored.toString("utf8");
  if (text[0] !== V1) return text;
  return decode(text, 1);
}
