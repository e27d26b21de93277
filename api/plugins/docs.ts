import type { FastifyPluginAsync } from "fastify";
import type { OpenApiCollector } from "../openapi.js";

/**
 * `/docs/json` serves the OpenAPI document; `/docs` a self-contained HTML page
 * rendered from it on the server — no JavaScript, no CDN, so it works on an
 * air-gapped host. (Swap in @fastify/swagger-ui here if an interactive UI is wanted.)
 */
export interface DocsOptions {
  openapi: OpenApiCollector;
  version: string;
}

type Doc = Record<string, unknown>;

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function renderHtml(doc: Doc): string {
  const info = doc.info as { title: string; version: string; description: string };
  const paths = doc.paths as Record<string, Record<string, Doc>>;
  const errors = doc["x-errors"] as { name: string; status: number; description: string }[];
  const operations: string[] = [];
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const scopes = (op["x-scopes"] as string[] | undefined) ?? [];
      const params = ((op.parameters as Doc[] | undefined) ?? [])
        .map((p) => `<code>${escape(String(p.name))}</code> (${escape(String(p.in))})`)
        .join(", ");
      operations.push(
        `<tr><td><b>${method.toUpperCase()}</b></td><td><code>${escape(path)}</code></td>` +
          `<td>${escape(String(op.summary ?? ""))}${params ? `<br><small>${params}</small>` : ""}</td>` +
          `<td>${scopes.length ? escape(scopes.join(", ")) : "public"}</td></tr>`,
      );
    }
  }
  const errorRows = errors
    .map(
      (e) =>
        `<tr><td><code>${escape(e.name)}</code></td><td>${e.status}</td><td>${escape(e.description)}</td></tr>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)} API</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:68rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.35rem;text-align:left;vertical-align:top}
code{background:#f4f4f4;padding:0 .2rem}</style></head><body>
<h1>${escape(info.title)} API <small>${escape(info.version)}</small></h1>
<p>The machine-readable document is at <a href="/docs/json"><code>/docs/json</code></a> (OpenAPI 3.1).
Authenticate with <code>Authorization: Bearer &lt;secret&gt;</code> or <code>x-api-key</code>.</p>
<h2>Routes</h2><table><tr><th>method</th><th>path</th><th>does</th><th>scopes</th></tr>${operations.join("")}</table>
<h2>Errors</h2><p>Every error answers <code>{"error", "message", "details"}</code>.</p>
<table><tr><th>error</th><th>status</th><th>meaning</th></tr>${errorRows}</table>
</body></html>`;
}

export const docsPlugin: FastifyPluginAsync<DocsOptions> = async (app, { openapi, version }) => {
  // Built on first request: by then every plugin has registered its routes.
  let doc: Doc | undefined;
  let html: string | undefined;
  const document = (): Doc => (doc ??= openapi.document(version));

  app.get("/docs/json", { config: { permission: "public", hidden: true } }, async () => document());
  app.get("/docs", { config: { permission: "public", hidden: true } }, async (_request, reply) =>
    reply.type("text/html; charset=utf-8").send((html ??= renderHtml(document()))),
  );
};
