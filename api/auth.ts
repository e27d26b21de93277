import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Caller } from "../runtime/contract/index.js";
import { apiError } from "./errors.js";

/**
 * API keys come from configuration (`STEPWISE_API_KEYS=name:scope:secret,...`). Each
 * key has a name (recorded in the history as the caller) and one scope:
 *
 * - `admin`: everything;
 * - `run`: start, stop and read executions, read state machines;
 * - `callback`: task-token callbacks and activity polling only — a worker or UI
 *   holding this key can answer a token but neither start nor read executions;
 * - `approve`: the approval inbox — list and read approvals, decide those whose
 *   `Approvers` share one of the key's groups (`STEPWISE_APPROVER_GROUPS`) or
 *   name none. The key's name is the approver recorded.
 */
export type Scope = "admin" | "run" | "callback" | "approve";
export const SCOPES: readonly Scope[] = ["admin", "run", "callback", "approve"];

/** What a route needs; each route declares one in its `config.permission`. */
export type Permission =
  | "public"
  | "identity"
  | "definitions:write"
  | "definitions:read"
  | "executions:write"
  | "executions:read"
  | "executions:purge"
  | "callback"
  | "approvals:read"
  | "approvals:decide";

const GRANTS: Record<Scope, ReadonlySet<Permission>> = {
  admin: new Set<Permission>([
    "identity",
    "definitions:write",
    "definitions:read",
    "executions:write",
    "executions:read",
    "executions:purge",
    "callback",
    "approvals:read",
    "approvals:decide",
  ]),
  run: new Set<Permission>(["identity", "definitions:read", "executions:write", "executions:read"]),
  callback: new Set<Permission>(["identity", "callback"]),
  approve: new Set<Permission>(["identity", "approvals:read", "approvals:decide"]),
};

/** Words for the 403 message: "may not <action>". */
const ACTIONS: Record<Exclude<Permission, "public">, string> = {
  identity: "tell who it is",
  "definitions:write": "create or change state machines",
  "definitions:read": "read state machines",
  "executions:write": "start or stop executions",
  "executions:read": "read executions",
  "executions:purge": "purge executions",
  callback: "answer task tokens or poll activities",
  "approvals:read": "read approvals",
  "approvals:decide": "decide approvals",
};

export interface ApiKey {
  name: string;
  scope: Scope;
  /** SHA-256 of the secret: compared in constant time, never the secret itself. */
  digest: Buffer;
  /** Approver groups (`STEPWISE_APPROVER_GROUPS`), for keys of scope `approve`. */
  groups?: string[];
}

/** The caller of a request: the key's name (recorded in the history), its scope and groups. */
export interface ApiCaller extends Caller {
  scope: Scope;
  groups: string[];
}

/**
 * The secrets themselves, for SigV4 (api/aws/sigv4.ts), which signs with the secret
 * and so cannot work from a digest. Held beside the keys rather than in them, so
 * that logging or serializing a key can never show its secret.
 */
const SECRETS = new WeakMap<ApiKey, string>();

/** The secret of a key parsed from configuration (undefined for keys built otherwise). */
export function secretOf(key: ApiKey): string | undefined {
  return SECRETS.get(key);
}

/** Whether a key's scope grants a permission. */
export function grants(key: Pick<ApiKey, "scope">, permission: Permission): boolean {
  return permission === "public" || GRANTS[key.scope].has(permission);
}

const KEY_NAME = /^[A-Za-z0-9_.-]{1,80}$/;
/** Short secrets are guessable; 16 characters is the floor. */
const MIN_SECRET_LENGTH = 16;

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/**
 * Parses `name:scope:secret` entries separated by commas (the secret is everything
 * after the second colon, so it may contain colons). Throws on any malformed entry:
 * a typo in key configuration must stop the service, not silently open or close it.
 */
export function parseApiKeys(text: string | undefined, groupsText?: string): ApiKey[] {
  const keys = parseKeyList(text);
  const groups = parseApproverGroups(groupsText);
  for (const [name, list] of groups) {
    const key = keys.find((k) => k.name === name);
    if (!key)
      throw new Error(
        `STEPWISE_APPROVER_GROUPS names key '${name}', which STEPWISE_API_KEYS does not define`,
      );
    key.groups = list;
  }
  return keys;
}

const GROUP = /^[A-Za-z0-9_.-]{1,80}$/;

/**
 * `alice=finance|legal;bob=finance`: each key's approver groups. Malformed text
 * throws, as key configuration does: a typo must not silently widen who decides.
 */
export function parseApproverGroups(text: string | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (text === undefined || text.trim() === "") return out;
  for (const raw of text.split(";")) {
    const part = raw.trim();
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = part.slice(0, eq).trim();
    const groups = part
      .slice(eq + 1)
      .split("|")
      .map((g) => g.trim());
    if (eq < 0 || !KEY_NAME.test(name) || groups.some((g) => !GROUP.test(g))) {
      throw new Error(
        `STEPWISE_APPROVER_GROUPS entry '${part}' is not name=group|group with groups matching ${GROUP.source}`,
      );
    }
    if (out.has(name)) throw new Error(`STEPWISE_APPROVER_GROUPS names key '${name}' twice`);
    out.set(name, groups);
  }
  return out;
}

function parseKeyList(text: string | undefined): ApiKey[] {
  if (text === undefined || text.trim() === "") return [];
  const keys: ApiKey[] = [];
  const names = new Set<string>();
  for (const [index, raw] of text.split(",").entries()) {
    const part = raw.trim();
    if (part === "") continue;
    const first = part.indexOf(":");
    const second = first < 0 ? -1 : part.indexOf(":", first + 1);
    if (second < 0) {
      throw new Error(`STEPWISE_API_KEYS entry ${index + 1} is not name:scope:secret`);
    }
    const name = part.slice(0, first);
    const scope = part.slice(first + 1, second);
    const secret = part.slice(second + 1);
    if (!KEY_NAME.test(name)) {
      throw new Error(
        `STEPWISE_API_KEYS entry ${index + 1}: the name must match ${KEY_NAME.source}`,
      );
    }
    if (!SCOPES.includes(scope as Scope)) {
      throw new Error(
        `STEPWISE_API_KEYS key '${name}': scope '${scope}' is not one of ${SCOPES.join(", ")}`,
      );
    }
    if (secret.length < MIN_SECRET_LENGTH) {
      throw new Error(
        `STEPWISE_API_KEYS key '${name}': the secret must have at least ${MIN_SECRET_LENGTH} characters`,
      );
    }
    if (names.has(name)) throw new Error(`STEPWISE_API_KEYS names key '${name}' twice`);
    names.add(name);
    const key: ApiKey = { name, scope: scope as Scope, digest: digest(secret) };
    SECRETS.set(key, secret);
    keys.push(key);
  }
  return keys;
}

/** The secret a request presents: `Authorization: Bearer <secret>` or `x-api-key: <secret>`. */
function presentedSecret(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === "string") {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    return match?.[1];
  }
  const apiKey = request.headers["x-api-key"];
  return typeof apiKey === "string" && apiKey !== "" ? apiKey : undefined;
}

/**
 * Finds the key whose secret was presented. Comparing digests (equal length by
 * construction) with timingSafeEqual, and visiting every key even after a match,
 * keeps the time independent of how much of a secret was right and of which key matched.
 */
export function findKey(keys: readonly ApiKey[], secret: string): ApiKey | undefined {
  const presented = digest(secret);
  let found: ApiKey | undefined;
  for (const key of keys) {
    if (timingSafeEqual(key.digest, presented) && found === undefined) found = key;
  }
  return found;
}

/**
 * Decides a request: returns the caller, or throws 401/403 from the registry. With no
 * keys configured everyone may do everything — safe only because the server then
 * binds to the loopback interface (see `listenAddress`) — and there is no caller:
 * the history records no name rather than one nobody chose.
 */
export function authorize(
  keys: readonly ApiKey[],
  request: FastifyRequest,
  permission: Permission,
): ApiCaller | undefined {
  if (permission === "public") return undefined;
  if (keys.length === 0) return undefined;
  const secret = presentedSecret(request);
  const key = secret === undefined ? undefined : findKey(keys, secret);
  if (!key) throw apiError("Unauthorized");
  if (!GRANTS[key.scope].has(permission)) {
    throw apiError("Forbidden", { key: key.name, scope: key.scope, action: ACTIONS[permission] });
  }
  return { name: key.name, scope: key.scope, groups: key.groups ?? [] };
}

/** What a scope may do, in a stable order (`GET /v1/me`: the console hides the rest). */
export function permissionsOf(scope: Scope): Exclude<Permission, "public">[] {
  return (Object.keys(ACTIONS) as Exclude<Permission, "public">[]).filter((p) =>
    GRANTS[scope].has(p),
  );
}

/** Which scopes may use a permission (for the OpenAPI document). */
export function scopesFor(permission: Permission): Scope[] {
  return SCOPES.filter((scope) => permission !== "public" && GRANTS[scope].has(permission));
}

/**
 * Where to listen. Without API keys the service is open to anyone who can reach it,
 * so it refuses to leave the loopback interface whatever HOST says.
 */
export function listenAddress(
  keys: readonly ApiKey[],
  host: string | undefined,
): { host: string; warning?: string } {
  if (keys.length > 0) return { host: host ?? "0.0.0.0" };
  return {
    host: "127.0.0.1",
    warning:
      "STEPWISE_API_KEYS is not set: authentication is off, so the API binds to 127.0.0.1 only" +
      (host !== undefined && host !== "127.0.0.1" ? ` (HOST=${host} ignored)` : "") +
      ". Set STEPWISE_API_KEYS=name:admin:secret,... to serve other hosts.",
  };
}
