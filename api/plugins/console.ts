import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync } from "fastify";
import { apiError } from "../errors.js";

/**
 * The web console (console/, built into console/dist at install) at `/console/`.
 * It is a single-page app: a path under /console/ that is no file (a page such as
 * /console/executions/…) answers index.html and the app routes it. index.html is
 * never cached (it names the current assets); the assets' names carry their
 * content hash, so they are cached for good. Public: the page holds no data, the
 * API it calls checks the key. The service's home page (`GET /`) is the console.
 */
export interface ConsoleOptions {
  /** buildServer's `consoleDir`; default: console/dist beside the sources or the compiled dist/. */
  root?: string;
}

export const consolePlugin: FastifyPluginAsync<ConsoleOptions> = async (app, options) => {
  // 302, not 301/308: a browser keeps a permanent redirect for good, and `/` may yet
  // become a page of its own. `POST /` is the AWS endpoint (api/aws), untouched.
  app.get("/", { config: { hidden: true } }, async (_request, reply) =>
    reply.redirect("/console/", 302),
  );
  const root = options.root ?? builtConsole();
  if (!root) {
    const notBuilt = async (): Promise<never> => {
      throw apiError("ServiceUnavailable", {
        reason: "the console is not built (run `npm run build:console`)",
      });
    };
    app.get("/console", { config: { hidden: true } }, notBuilt);
    app.get("/console/*", { config: { hidden: true } }, notBuilt);
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: "/console/",
    // One route per file, found at start: the wildcard below is then free for the pages.
    wildcard: false,
    index: ["index.html"],
    // Our own cache headers below, per file kind.
    cacheControl: false,
    setHeaders(reply, path) {
      reply.header(
        "cache-control",
        /[.-][0-9A-Za-z_-]{8,}\.(js|css|svg|png|woff2?)$/.test(path)
          ? "public, max-age=31536000, immutable"
          : "no-cache",
      );
    },
  });
  app.get("/console", { config: { hidden: true } }, async (_request, reply) =>
    reply.redirect("/console/", 301),
  );
  app.get<{ Params: { "*": string } }>(
    "/console/*",
    { config: { hidden: true } },
    async (request, reply) => {
      const path = request.params["*"];
      // A file that is not there is a 404; a page of the app (no extension) is the app shell.
      if (/\.[A-Za-z0-9]+$/.test(path)) {
        throw apiError("RouteNotFound", { method: request.method, url: `/console/${path}` });
      }
      return reply.header("cache-control", "no-cache").sendFile("index.html");
    },
  );
};

/** console/dist relative to this module, from the sources (api/plugins) or the bundle (dist/cli). */
function builtConsole(): string | undefined {
  const dir = fileURLToPath(new URL("../../console/dist/", import.meta.url));
  return existsSync(`${dir}index.html`) ? dir : undefined;
}
