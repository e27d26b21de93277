import type { EgressPolicy } from "../egress.js";
import type { AwsService } from "./services.js";
import { EgressRefused } from "../outbound.js";
import { egressAgents, literalRefusal, type Agents } from "./transport.js";

/**
 * The AWS SDK clients of one runner, made when first needed and kept per service
 * and region.
 *
 * Every client package is imported by a name computed at run time, so esbuild
 * (scripts/build.ts) leaves it out of the bundle and Node resolves it from
 * node_modules when a task first calls the service: a worker that never calls AWS
 * never loads the SDK (~250 ms of CPU for one client), and any
 * `@aws-sdk/client-<service>` the deployment installs serves `aws-sdk:<service>:…`.
 * All clients so share one `@aws-sdk/core` from node_modules.
 *
 * Region: the resource's own (`arn:aws:states:<region>::…`), else the configured
 * one (STEPWISE_AWS_REGION), else the SDK's chain (`AWS_REGION`, the profile), else
 * us-east-1. Credentials: the SDK's default chain (environment, shared config and
 * profile, SSO, container and instance roles), unless the runner is given some.
 */
export interface ClientSettings {
  region?: string;
  /** Endpoint overrides by service key (`S3`, `DYNAMODB`…): STEPWISE_AWS_ENDPOINT_<KEY>. */
  endpoints?: Readonly<Record<string, string>>;
  egress: EgressPolicy;
  /** Static credentials (embedding, tests); default: the SDK's chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** How a package is loaded (default: `import`, resolved from node_modules). */
  importer?: (pkg: string) => Promise<unknown>;
}

/** An SDK client as this runner uses it. */
export interface SdkClient {
  send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
  config: { region: () => Promise<string> };
  middlewareStack: {
    add(
      middleware: (
        next: (args: unknown) => Promise<{ output: unknown; response: unknown }>,
      ) => (args: unknown) => Promise<{ output: unknown; response: unknown }>,
      options: { step: string; name: string },
    ): void;
  };
  destroy(): void;
}

type ClientClass = new (config: Record<string, unknown>) => SdkClient;
export type CommandClass = new (input: Record<string, unknown>) => unknown;

/** A client package that is not installed; the cause says which to install. */
export class MissingClientPackage extends Error {
  constructor(readonly pkg: string) {
    super(
      `the AWS SDK client package ${pkg} is not installed on this worker; install it beside Stepwise (npm install ${pkg}) and restart the worker`,
    );
    this.name = "MissingClientPackage";
  }
}

/** The HTTP answer behind an output (status and headers), for `SdkHttpMetadata`. */
export interface HttpAnswer {
  statusCode: number;
  headers: Record<string, string>;
}

const answers = new WeakMap<object, HttpAnswer>();

export function httpAnswerOf(output: unknown): HttpAnswer | undefined {
  return typeof output === "object" && output !== null ? answers.get(output) : undefined;
}

const FALLBACK_REGION = "us-east-1";

/** A computed name: esbuild leaves `import(name)` alone, Node resolves it at run time. */
const importPackage = (pkg: string): Promise<unknown> => import(pkg);

export class AwsClients {
  private readonly modules = new Map<string, Promise<Record<string, unknown>>>();
  private readonly clients = new Map<string, Promise<SdkClient>>();
  private readonly agents: Agents;
  private chainRegion: Promise<string> | undefined;
  private readonly importer: (pkg: string) => Promise<unknown>;

  constructor(private readonly settings: ClientSettings) {
    this.agents = egressAgents(settings.egress);
    this.importer = settings.importer ?? importPackage;
  }

  /** The endpoint override of a service, if any. */
  endpoint(service: AwsService): string | undefined {
    return this.settings.endpoints?.[service.envKey];
  }

  /** The package's exports; MissingClientPackage when it is not installed. */
  module(pkg: string): Promise<Record<string, unknown>> {
    let loaded = this.modules.get(pkg);
    if (!loaded) {
      loaded = this.load(pkg);
      this.modules.set(pkg, loaded);
      // A failed load is not kept: the package may be installed meanwhile.
      loaded.catch(() => this.modules.delete(pkg));
    }
    return loaded;
  }

  async command(service: AwsService, name: string): Promise<CommandClass | undefined> {
    const exports = await this.module(service.pkg);
    const found = exports[name];
    return typeof found === "function" ? (found as CommandClass) : undefined;
  }

  async client(service: AwsService, resourceRegion: string | undefined): Promise<SdkClient> {
    const endpoint = this.endpoint(service);
    if (endpoint !== undefined) {
      const refused = literalRefusal(this.settings.egress, new URL(endpoint));
      // An IP literal never reaches the agents' lookup: judged here, before any request.
      if (refused) throw new EgressRefused(refused);
    }
    const region = resourceRegion ?? this.settings.region ?? (await this.regionFromChain(service));
    const key = `${service.pkg} ${region}`;
    let client = this.clients.get(key);
    if (!client) {
      client = this.make(service, region, endpoint);
      this.clients.set(key, client);
      client.catch(() => this.clients.delete(key));
    }
    return client;
  }

  close(): void {
    for (const client of this.clients.values()) {
      client.then((c) => c.destroy()).catch(() => undefined);
    }
    this.clients.clear();
    this.agents.httpAgent.destroy();
    this.agents.httpsAgent.destroy();
  }

  private async load(pkg: string): Promise<Record<string, unknown>> {
    await quietNodeVersionWarning(this.importer);
    try {
      return (await this.importer(pkg)) as Record<string, unknown>;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (
        (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
        (err as Error).message.includes(pkg)
      ) {
        throw new MissingClientPackage(pkg);
      }
      throw err;
    }
  }

  private async make(
    service: AwsService,
    region: string,
    endpoint: string | undefined,
  ): Promise<SdkClient> {
    const exports = await this.module(service.pkg);
    const name = Object.keys(exports).find((k) => /^[A-Za-z0-9]+Client$/.test(k));
    const Client = name !== undefined ? (exports[name] as ClientClass) : undefined;
    if (Client === undefined) throw new Error(`${service.pkg} exports no client class`);
    const client = new Client({
      region,
      ...(this.settings.credentials ? { credentials: this.settings.credentials } : {}),
      ...(endpoint !== undefined ? { endpoint } : {}),
      // S3-compatible stores are addressed by path (bucket names need no DNS), and
      // some keep the aws-chunked framing of a streamed body that carries the SDK's
      // default checksums: send and check them only when an operation requires them.
      ...(service.envKey === "S3"
        ? {
            ...(endpoint !== undefined ? { forcePathStyle: true } : {}),
            requestChecksumCalculation: "WHEN_REQUIRED",
            responseChecksumValidation: "WHEN_REQUIRED",
          }
        : {}),
      requestHandler: { ...this.agents },
    });
    // The status and headers of each answer, for the `SdkHttpMetadata` AWS's
    // optimized integrations return (the SDK keeps only the request id).
    client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const response = result.response as { statusCode?: number; headers?: unknown };
        if (typeof result.output === "object" && result.output !== null) {
          answers.set(result.output, {
            statusCode: response.statusCode ?? 0,
            headers: (response.headers ?? {}) as Record<string, string>,
          });
        }
        return result;
      },
      { step: "build", name: "stepwiseHttpAnswer" },
    );
    return client;
  }

  /** The SDK's region chain (AWS_REGION, the profile), else us-east-1; asked once. */
  private regionFromChain(service: AwsService): Promise<string> {
    this.chainRegion ??= (async () => {
      try {
        const exports = await this.module(service.pkg);
        const name = Object.keys(exports).find((k) => /^[A-Za-z0-9]+Client$/.test(k));
        if (name === undefined) return FALLBACK_REGION;
        const probe = new (exports[name] as ClientClass)({});
        try {
          return await probe.config.region();
        } finally {
          probe.destroy();
        }
      } catch {
        return FALLBACK_REGION;
      }
    })();
    return this.chainRegion;
  }
}

let quieted: Promise<void> | undefined;

/**
 * AWS SDK releases from 2026 on print a `NodeVersionSupportWarning` (through
 * `process.emitWarning`, so on stderr, outside the JSON log) the first time a
 * client is made on Node < 22. It concerns the SDK's future releases, not what a
 * Stepwise operator can act on per process, so the service marks it as already
 * given: the SDK's own switch for it, `state.warningEmitted` of
 * `@aws-sdk/core/client` (what `AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true`
 * sets). Both copies are marked: the one the clients load from node_modules and
 * the one esbuild may have bundled for other SDK users (runtime/map-runs/).
 */
export function quietNodeVersionWarning(
  importer: (pkg: string) => Promise<unknown> = importPackage,
): Promise<void> {
  quieted ??= (async () => {
    type Core = { state?: { warningEmitted?: boolean }; default?: Core };
    // A CommonJS module imported: its exports by name, or under `default`.
    const mark = (core: unknown) => {
      const state = (core as Core).state ?? (core as Core).default?.state;
      if (state) state.warningEmitted = true;
    };
    await importer("@aws-sdk/core/client").then(mark, () => undefined);
    await import("@aws-sdk/core/client").then(mark, () => undefined);
  })();
  return quieted;
}
