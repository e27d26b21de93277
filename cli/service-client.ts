import type { ParsedArgs } from "./args.js";
import { EXIT, type CommandIO } from "./command.js";

/**
 * What the client commands (`machines`, `executions`, `approvals`) share: the
 * service's address and key (`--url`/`STEPWISE_URL`, `--api-key`/`STEPWISE_API_KEY`),
 * JSON calls, the SSE reader `executions watch` follows, and output for a person
 * (aligned tables, colour only on a terminal and never with `NO_COLOR`).
 */
export const CLIENT_OPTIONS = `Options:
  --url URL         the service (STEPWISE_URL; default http://127.0.0.1:8080)
  --api-key SECRET  an API key (STEPWISE_API_KEY)
  --json            print the service's JSON answer`;

export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

export interface StreamEvent {
  id?: string;
  event: string;
  data: unknown;
}

export class ServiceClient {
  constructor(
    readonly base: string,
    private readonly key: string | undefined,
  ) {}

  static from(args: ParsedArgs): ServiceClient {
    return new ServiceClient(
      args.values.get("url") ?? process.env.STEPWISE_URL ?? "http://127.0.0.1:8080",
      args.values.get("api-key") ?? process.env.STEPWISE_API_KEY,
    );
  }

  async call(method: string, path: string, body?: unknown): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(new URL(path, this.base), {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      parsed = { error: "InvalidResponse", message: text.slice(0, 200) };
    }
    return { status: response.status, body: parsed };
  }

  /**
   * Follows a Server-Sent Events route, calling `onEvent` per message, until the
   * server ends the stream (resolves with undefined) or answers an error first
   * (resolves with that reply).
   */
  async stream(path: string, onEvent: (event: StreamEvent) => void): Promise<Reply | undefined> {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    const response = await fetch(new URL(path, this.base), { headers });
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Reply["body"]) : {} };
    }
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const message = parseMessage(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (message) onEvent(message);
      }
    }
    return undefined;
  }
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
  const on = tty === true && !process.env.NO_COLOR;
  return (colour, text) => (on ? `\u001b[${COLOURS[colour]}m${text}\u001b[0m` : text);
}

/** The colour of an execution status. */
export function statusColour(status: string): Colour {
  if (status === "SUCCEEDED") return "green";
  if (status === "RUNNING") return "yellow";
  if (status === "PAUSED") return "grey";
  return "red";
}
