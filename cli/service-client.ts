import { numberOption, type ParsedArgs } from "./args.js";
import { loadClientConfig, processEnvironment } from "../config/index.js";
import { CommandFailure, EXIT, UsageError, type CommandIO } from "./command.js";

/**
 * What the client commands (`machines`, `executions`, `approvals`) share: the
 * service's address and key (`--url`/`STEPWISE_URL`, `--api-key`/`STEPWISE_API_KEY`),
 * JSON calls, the SSE reader `executions watch` follows, and output for a person
 * (aligned tables, colour only on a terminal and never with `NO_COLOR`). A service
 * that cannot be reached, or that answers something other than the API, is a
 * `CommandFailure`: one line naming the address, the reason and what to check.
 */
export const CLIENT_OPTIONS = `Options:
  --url URL         the service (STEPWISE_URL; default http://127.0.0.1:8080); an
                    address without a scheme is http:// (localhost:8080)
  --api-key SECRET  an API key (STEPWISE_API_KEY)
  --timeout S       seconds to wait for the service to answer (default 30; a
                    start's --wait is added)
  --json            print the service's JSON answer`;

/** The options every client command takes besides its own. */
export const CLIENT_VALUES = ["url", "api-key", "timeout"];

const DEFAULT_URL = "http://127.0.0.1:8080";
const DEFAULT_TIMEOUT_SECONDS = 30;

export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

export interface StreamEvent {
  id?: string;
  event: string;
  data: unknown;
}

/** Where the service's address came from, so an error can say what to change. */
type UrlSource = "--url" | "STEPWISE_URL" | "default";

/** The environment's settings for the client (the one place they are read). */
function environment(): { url: string | undefined; key: string | undefined } {
  const env = processEnvironment();
  return { url: env.STEPWISE_URL, key: env.STEPWISE_API_KEY };
}

/**
 * The service's base URL from what was given. A bare `host:port` means http://
 * (unambiguous: nothing else listens for this API); another scheme is a usage error.
 */
export function serviceUrl(raw: string, source: string): URL {
  const text = raw.trim();
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`${source} '${raw}' is not a URL (such as http://127.0.0.1:8080)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`${source} '${raw}' needs http:// or https://`);
  }
  return url;
}

export class ServiceClient {
  /** The address as errors name it: scheme, host and port. */
  readonly base: string;

  constructor(
    base: URL,
    private readonly key: string | undefined,
    private readonly source: UrlSource = "default",
    private readonly timeoutSeconds = DEFAULT_TIMEOUT_SECONDS,
  ) {
    this.base = base.origin;
  }

  static from(args: ParsedArgs): ServiceClient {
    const env = environment();
    const option = args.values.get("url");
    const [raw, source]: [string, UrlSource] =
      option !== undefined
        ? [option, "--url"]
        : env.url !== undefined && env.url !== ""
          ? [env.url, "STEPWISE_URL"]
          : [DEFAULT_URL, "default"];
    return new ServiceClient(
      serviceUrl(raw, source === "default" ? "the URL" : source),
      args.values.get("api-key") ?? env.key,
      source,
      numberOption(args, "timeout", 1) ?? DEFAULT_TIMEOUT_SECONDS,
    );
  }

  /** A JSON call; `waitSeconds` is how long the service may hold it on purpose (`?wait=`). */
  async call(method: string, path: string, body?: unknown, waitSeconds = 0): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const seconds = this.timeoutSeconds + waitSeconds;
    const deadline = AbortSignal.timeout(seconds * 1000);
    try {
      const response = await fetch(new URL(path, this.base), {
        method,
        headers,
        signal: deadline,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: this.parse(response, await response.text()) };
    } catch (err) {
      throw this.unreachable(err, seconds);
    }
  }

  /**
   * Follows a Server-Sent Events route, calling `onEvent` per message, until the
   * server ends the stream (resolves with undefined) or answers an error first
   * (resolves with that reply). The timeout covers the answer's start, not the stream.
   */
  async stream(path: string, onEvent: (event: StreamEvent) => void): Promise<Reply | undefined> {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new DOMException("no answer", "TimeoutError")),
      this.timeoutSeconds * 1000,
    );
    let response: Response;
    try {
      response = await fetch(new URL(path, this.base), { headers, signal: abort.signal });
      if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        return { status: response.status, body: this.parse(response, await response.text()) };
      }
    } catch (err) {
      throw this.unreachable(err, this.timeoutSeconds);
    } finally {
      clearTimeout(timer);
    }
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const message = parseMessage(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (message) onEvent(message);
        }
      }
    } catch (err) {
      if (!fetchError(err)) throw err;
      throw new CommandFailure(
        `the connection to ${this.base} closed before the stream ended (did the service stop?)`,
      );
    }
    return undefined;
  }

  /** A JSON body; anything else means the URL is not the Stepwise API (a proxy's page, another server). */
  private parse(response: Response, text: string): Record<string, unknown> {
    if (text === "") return {};
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      const type = response.headers.get("content-type")?.split(";")[0] ?? "no content type";
      throw new CommandFailure(
        `${this.base} answered ${response.status} ${response.statusText} (${type}), not the ` +
          `Stepwise API's JSON (is it the Stepwise service? ${this.check()})`,
      );
    }
  }

  /** The one-line failure for an error of fetch; any other error is a bug and passes. */
  private unreachable(err: unknown, seconds: number): unknown {
    if (err instanceof CommandFailure) return err;
    const isTimeout = err instanceof DOMException && err.name === "TimeoutError";
    if (!fetchError(err) && !isTimeout) return err;
    const why = isTimeout
      ? { text: `no answer within ${seconds} s`, down: false, timeout: true }
      : reason(err, 0);
    const hint = why.timeout
      ? `is the service overloaded? raise --timeout, or ${this.check()}`
      : why.down
        ? this.source === "default"
          ? `is "stepwise serve" running? set --url or STEPWISE_URL`
          : `is "stepwise serve" running there? ${this.check()}`
        : this.check();
    return new CommandFailure(`cannot reach ${this.base}: ${why.text} (${hint})`);
  }

  private check(): string {
    return this.source === "default" ? "set --url or STEPWISE_URL" : `check ${this.source}`;
  }
}

/** fetch's own failures are TypeErrors with the network's error as the cause. */
function fetchError(err: unknown): err is TypeError {
  return err instanceof TypeError && err.cause !== undefined;
}

/**
 * Why fetch failed, from undici's cause (`fetch failed` itself says nothing). `down`:
 * nothing answers at that address, so the service is likely not running.
 */
function reason(err: unknown, depth: number): { text: string; down: boolean; timeout: boolean } {
  const cause = (err as { cause?: unknown }).cause;
  const e = (cause ?? err) as {
    code?: string;
    message?: string;
    hostname?: string;
    errors?: unknown[];
  };
  // Several addresses tried (localhost as ::1 and 127.0.0.1): the first one's reason.
  if (e.code === undefined && Array.isArray(e.errors) && e.errors.length > 0 && depth < 2) {
    return reason({ cause: e.errors[0] }, depth + 1);
  }
  const message = e.message ?? String(cause ?? err);
  const code = e.code ?? "";
  const is = (text: string, down = false, timeout = false) => ({ text, down, timeout });
  switch (code) {
    case "ECONNREFUSED":
      return is("connection refused", true);
    case "ENOTFOUND":
      return is(`host '${e.hostname ?? "?"}' not found`);
    case "EAI_AGAIN":
      return is(`cannot look up host '${e.hostname ?? "?"}' (DNS did not answer)`);
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return is("timed out connecting", true, true);
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return is(code === "EHOSTUNREACH" ? "host unreachable" : "network unreachable", true);
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
    case "UND_ERR_CLOSED":
      return is("the connection closed without an HTTP answer");
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return is("the service stopped answering", false, true);
  }
  if (code.startsWith("HPE_")) return is("the answer is not HTTP");
  if (/CERT|SSL|TLS|EPROTO/.test(code)) return is(`TLS: ${message}`);
  // The Fetch standard's "bad ports" (6000, 6665–6669, …), refused before connecting.
  if (message === "bad port") return is("fetch will not connect to this port, one browsers block");
  return is(message);
}

/** One `text/event-stream` block; comments and `retry:` lines give nothing. */
export function parseMessage(block: string): StreamEvent | undefined {
  let event = "message";
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return undefined;
  const message: StreamEvent = { event, data: JSON.parse(data.join("\n")) as unknown };
  if (id !== undefined) message.id = id;
  return message;
}

/** Prints the service's refusal (`409 ExecutionNotRunning: …`) and answers exit code 1. */
export function refused(io: CommandIO, command: string, reply: Reply): number {
  io.stderr(
    `stepwise ${command}: ${reply.status} ${String(reply.body.error ?? "")}: ${String(reply.body.message ?? "")}\n`,
  );
  return EXIT.failed;
}

export function printJson(io: CommandIO, value: unknown): number {
  io.stdout(JSON.stringify(value, null, 2) + "\n");
  return EXIT.ok;
}

/** Rows aligned under a header; the last column is left ragged. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  return [header, ...rows]
    .map(
      (row) =>
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join("  ")
          .trimEnd() + "\n",
    )
    .join("");
}

const COLOURS = { green: 32, red: 31, yellow: 33, grey: 90, bold: 1 } as const;
export type Colour = keyof typeof COLOURS;

/** Colours text for a terminal; plain for pipes, files and `NO_COLOR`. */
export function painter(tty: boolean | undefined): (colour: Colour, text: string) => string {
  const on = tty === true && loadClientConfig(processEnvironment()).color;
  return (colour, text) => (on ? `\u001b[${COLOURS[colour]}m${text}\u001b[0m` : text);
}

/** The colour of an execution status. */
export function statusColour(status: string): Colour {
  if (status === "SUCCEEDED") return "green";
  if (status === "RUNNING") return "yellow";
  if (status === "PAUSED") return "grey";
  return "red";
}
