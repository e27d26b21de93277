/**
 * A Server-Sent Events parser (WHATWG HTML, "Parsing an event stream"), fed text
 * chunks as they arrive. The browser's EventSource cannot send an Authorization
 * header, so the console reads the stream with fetch() and parses it here.
 */

export interface SseMessage {
  /** `message` when the stream names none. */
  event: string;
  data: string;
  /** The last `id:` seen so far (ids persist across messages, as the spec says). */
  lastEventId: string;
}

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private lastEventId = "";
  /** A chunk may end between `\r` and `\n`: the `\n` must not make an empty line. */
  private skipLeadingLf = false;

  /** Parses a chunk; returns the messages it completed. */
  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.skipLeadingLf && text.startsWith("\n")) text = text.slice(1);
    this.skipLeadingLf = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // A lone `\r` at the very end may be the first half of `\r\n`.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) {
        this.skipLeadingLf = true;
      }
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined; // a comment (`: ping`)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.lastEventId = value;
        break;
      // `retry` is ignored: reconnection delays are the client's policy here.
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const data = this.data;
    const event = this.event;
    this.data = [];
    this.event = "";
    if (data.length === 0) return undefined;
    return { event: event || "message", data: data.join("\n"), lastEventId: this.lastEventId };
  }
}
