import type { Json } from "../../engine/core/json.js";

/**
 * The pure parsers of a Distributed Map's ItemReader (AWS "ItemReader (Map)"):
 * CSV rows and JSON Lines, fed in chunks as the object streams in, so that an
 * object is never held whole in memory. I/O lives in item-reader.ts.
 */

/** A line of the object that cannot be read as an item: the Map fails with States.ItemReaderFailed. */
export class ItemParseError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = "ItemParseError";
  }
}

export const CSV_DELIMITERS = {
  COMMA: ",",
  PIPE: "|",
  SEMICOLON: ";",
  SPACE: " ",
  TAB: "\t",
} as const;

export type CsvDelimiterName = keyof typeof CSV_DELIMITERS;

/** A CSV row and the line it starts on (1-based). */
export interface CsvRow {
  line: number;
  fields: string[];
}

/**
 * RFC 4180 rows from chunks of text: fields may be quoted (`"a,b"`, `""` for a
 * quote), a quoted field may span lines, lines end with LF or CRLF. A quote
 * inside an unquoted field, text after a closing quote, or a quote left open at
 * the end is malformed. Blank lines are skipped.
 */
export class CsvRowParser {
  private field = "";
  private fields: string[] = [];
  private inQuotes = false;
  /** In a quoted field, a quote was just read: it closes the field or starts `""`. */
  private quotePending = false;
  /** The field was quoted (closed): only a delimiter or a line end may follow. */
  private closed = false;
  private line = 1;
  private rowLine = 1;
  private pendingCR = false;

  constructor(private readonly delimiter: string = ",") {}

  push(chunk: string): CsvRow[] {
    const rows: CsvRow[] = [];
    for (let i = 0; i < chunk.length; i++) this.char(chunk[i]!, rows);
    return rows;
  }

  end(): CsvRow[] {
    const rows: CsvRow[] = [];
    if (this.inQuotes && !this.quotePending) {
      throw new ItemParseError(this.rowLine, "a quoted field is not closed");
    }
    if (this.quotePending) {
      this.inQuotes = false;
      this.quotePending = false;
      this.closed = true;
    }
    if (this.field !== "" || this.fields.length > 0 || this.closed) this.endRow(rows);
    return rows;
  }

  private char(c: string, rows: CsvRow[]): void {
    if (this.pendingCR) {
      this.pendingCR = false;
      if (c === "\n") return;
    }
    if (this.inQuotes) {
      if (this.quotePending) {
        this.quotePending = false;
        if (c === '"') {
          this.field += '"';
          return;
        }
        this.inQuotes = false;
        this.closed = true;
        // falls through: the character after the closing quote
      } else {
        if (c === '"') this.quotePending = true;
        else {
          if (c === "\n") this.line += 1;
          this.field += c;
        }
        return;
      }
    }
    if (c === this.delimiter) {
      this.fields.push(this.field);
      this.field = "";
      this.closed = false;
      return;
    }
    if (c === "\n" || c === "\r") {
      if (c === "\r") this.pendingCR = true;
      if (this.field !== "" || this.fields.length > 0 || this.closed) this.endRow(rows);
      this.line += 1;
      this.rowLine = this.line;
      return;
    }
    if (this.closed) {
      throw new ItemParseError(this.rowLine, `unexpected '${c}' after a closing quote`);
    }
    if (c === '"') {
      if (this.field !== "") {
        throw new ItemParseError(this.rowLine, "a quote inside an unquoted field");
      }
      this.inQuotes = true;
      return;
    }
    this.field += c;
  }

  private endRow(rows: CsvRow[]): void {
    this.fields.push(this.field);
    rows.push({ line: this.rowLine, fields: this.fields });
    this.fields = [];
    this.field = "";
    this.closed = false;
  }
}

/**
 * CSV rows to items: objects from header names to the row's values, all strings
 * as AWS reads them. `headers` given (`CSVHeaderLocation: GIVEN`), or taken from
 * the first row (`FIRST_ROW`). A row with another number of fields than the
 * headers is malformed.
 */
export class CsvItems {
  private headers: string[] | undefined;

  constructor(headers?: readonly string[]) {
    if (headers) this.headers = checkHeaders([...headers], 0);
  }

  item(row: CsvRow): Json | undefined {
    if (!this.headers) {
      this.headers = checkHeaders(row.fields, row.line);
      return undefined;
    }
    if (row.fields.length !== this.headers.length) {
      throw new ItemParseError(
        row.line,
        `the row has ${row.fields.length} fields but there are ${this.headers.length} headers`,
      );
    }
    const item: Record<string, Json> = {};
    this.headers.forEach((name, i) => (item[name] = row.fields[i]!));
    return item;
  }
}

function checkHeaders(headers: string[], line: number): string[] {
  const seen = new Set<string>();
  for (const name of headers) {
    if (seen.has(name)) throw new ItemParseError(line, `the header '${name}' is duplicated`);
    seen.add(name);
  }
  return headers;
}

/** One line of a JSON Lines object: its item, or undefined for a blank line. */
export function jsonLine(text: string, line: number): Json | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  try {
    return JSON.parse(trimmed) as Json;
  } catch (err) {
    throw new ItemParseError(
      line,
      `not JSON (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

/** Splits chunks of text into lines (LF or CRLF), numbered from 1. */
export class LineSplitter {
  private rest = "";
  private line = 0;

  push(chunk: string): { line: number; text: string }[] {
    const text = this.rest + chunk;
    const parts = text.split("\n");
    this.rest = parts.pop()!;
    return parts.map((part) => ({ line: ++this.line, text: part.replace(/\r$/, "") }));
  }

  end(): { line: number; text: string }[] {
    if (this.rest === "") return [];
    const last = { line: ++this.line, text: this.rest.replace(/\r$/, "") };
    this.rest = "";
    return [last];
  }
}

/** RFC 6901: the value at `pointer` in `doc`, or undefined. */
export function atPointer(doc: Json, pointer: string): Json | undefined {
  if (pointer === "" || pointer === "/") return pointer === "" ? doc : undefined;
  if (!pointer.startsWith("/")) return undefined;
  let value: Json | undefined = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(value)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
      value = value[Number(key)];
    } else if (value !== null && typeof value === "object") {
      value = Object.prototype.hasOwnProperty.call(value, key)
        ? (value as Record<string, Json>)[key]
        : undefined;
    } else return undefined;
    if (value === undefined) return undefined;
  }
  return value;
}
