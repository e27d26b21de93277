import { actionError, parseArgs, type ParsedArgs } from "./args.js";
import { EXIT, UsageError, type Action, type CommandIO } from "./command.js";
import { CLIENT_VALUES, printJson, refused, ServiceClient, table } from "./service-client.js";

/**
 * What `stepwise schedules` and `stepwise rules` share: the command line of a named
 * resource of the service (`ACTION [NAME ...]`), and its list, get, create and delete
 * over REST. Each command keeps what differs: its usage, its columns, how it builds
 * a create's body, and any action of its own (a schedule's backfill).
 */

export interface NamedResource {
  /** The command (`schedules`), as refusals name it. */
  command: string;
  /** What one is called in usage errors (`schedule`). */
  noun: string;
  /** The collection's REST path (`/v1/schedules`). */
  path: string;
  actions: Action[];
  /** The list's header, and one item's row under it. */
  columns: string[];
  row(item: Record<string, unknown>): string[];
}

/** A parsed command line: the action, the resource's name, what follows it, the options. */
export interface NamedCommandLine {
  action: string;
  /** Present for every action but `list`. */
  name: string | undefined;
  /** Positionals after the name (at most `extra` of them). */
  rest: string[];
  args: ParsedArgs;
}

export function parseNamedCommand(
  resource: NamedResource,
  argv: string[],
  options: { flags?: string[]; values?: string[]; extra?: number } = {},
): NamedCommandLine {
  const args = parseArgs(argv, {
    flags: ["json", ...(options.flags ?? [])],
    values: [...CLIENT_VALUES, ...(options.values ?? [])],
  });
  const [action, name, ...rest] = args.positionals;
  if (!resource.actions.some((a) => a.name === action)) throw actionError(resource.actions, action);
  const unexpected = rest[options.extra ?? 0];
  if (unexpected !== undefined) throw new UsageError(`unexpected argument '${unexpected}'`);
  if (action !== "list" && name === undefined)
    throw new UsageError(`${action} needs a ${resource.noun} name`);
  return { action: action!, name, rest, args };
}

/** The REST calls of a named resource, answering on `io` as every client command does. */
export class NamedResourceClient {
  private readonly service: ServiceClient;
  private readonly json: boolean;

  constructor(
    private readonly resource: NamedResource,
    args: ParsedArgs,
    private readonly io: CommandIO,
  ) {
    this.service = ServiceClient.from(args);
    this.json = args.flags.has("json");
  }

  /** `/v1/<resources>/<name>`. */
  pathOf(name: string): string {
    return `${this.resource.path}/${encodeURIComponent(name)}`;
  }

  async list(): Promise<number> {
    const reply = await this.service.call("GET", this.resource.path);
    if (reply.status !== 200) return refused(this.io, this.resource.command, reply);
    if (this.json) return printJson(this.io, reply.body);
    const items = reply.body.items as Record<string, unknown>[];
    this.io.stdout(
      table(
        this.resource.columns,
        items.map((item) => this.resource.row(item)),
      ),
    );
    return EXIT.ok;
  }

  async get(name: string): Promise<number> {
    const reply = await this.service.call("GET", this.pathOf(name));
    if (reply.status !== 200) return refused(this.io, this.resource.command, reply);
    return printJson(this.io, reply.body);
  }

  async delete(name: string): Promise<number> {
    const reply = await this.service.call("DELETE", this.pathOf(name));
    if (reply.status !== 204) return refused(this.io, this.resource.command, reply);
    if (!this.json) this.io.stdout(`${name}: deleted\n`);
    return EXIT.ok;
  }

  /** Creates it from `body`; `said` is the line printed without --json. */
  async create(
    name: string,
    body: Record<string, unknown>,
    said: (created: Record<string, unknown>) => string,
  ): Promise<number> {
    const reply = await this.service.call("POST", this.resource.path, { ...body, name });
    if (reply.status !== 201) return refused(this.io, this.resource.command, reply);
    if (this.json) return printJson(this.io, reply.body);
    this.io.stdout(`${name}: ${said(reply.body)}\n`);
    return EXIT.ok;
  }

  /** Any other call of the command (a backfill): the reply, or the refusal's exit code. */
  async call(
    method: string,
    path: string,
    expected: number,
    body?: unknown,
  ): Promise<Record<string, unknown> | number> {
    const reply = await this.service.call(method, path, body);
    if (reply.status !== expected) return refused(this.io, this.resource.command, reply);
    if (this.json) return printJson(this.io, reply.body);
    return reply.body;
  }
}
