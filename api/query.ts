import type { RouteOptions } from "fastify";

/**
 * Unknown query parameters are refused (400 naming the parameter), as unknown body
 * fields are: `?stateMachne=x` silently listing everything is worse than an error.
 * An `onRoute` hook closes every /v1 route's query-string schema before it is
 * compiled; a route without one takes no parameters at all.
 */
export function closeQueryString(route: RouteOptions): void {
  if (!route.url.startsWith("/v1/")) return;
  const schema = (route.schema ??= {});
  const query = schema.querystring as Record<string, unknown> | undefined;
  if (query === undefined) {
    schema.querystring = { type: "object", properties: {}, additionalProperties: false };
  } else if (query.additionalProperties === undefined) {
    schema.querystring = { ...query, additionalProperties: false };
  }
}
