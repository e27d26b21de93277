import type { FastifyPluginAsync } from "fastify";
import { permissionsOf, SCOPES, type Permission } from "../auth.js";
import { errorResponses } from "../schemas.js";
import type { PluginOptions } from "../server.js";

/**
 * `GET /v1/me`: who the presented key is and what it may do, so a client (the
 * console) can ask for a key only when one is needed and hide what the key cannot
 * do. With no keys configured (the loopback-only service), everyone is `admin`.
 */
const PERMISSIONS = permissionsOf("admin");

const me = {
  type: "object",
  required: ["name", "scope", "permissions", "groups", "authenticated"],
  properties: {
    name: { type: ["string", "null"], description: "The key's name; null without keys." },
    scope: { type: "string", enum: SCOPES },
    permissions: { type: "array", items: { type: "string", enum: PERMISSIONS } },
    groups: {
      type: "array",
      items: { type: "string" },
      description: "Approver groups of the key (STEPWISE_APPROVER_GROUPS).",
    },
    authenticated: {
      type: "boolean",
      description: "False when the service has no API keys (loopback only).",
    },
  },
} as const;

export const mePlugin: FastifyPluginAsync<PluginOptions> = async (app) => {
  app.get(
    "/me",
    {
      config: { permission: "identity" satisfies Permission },
      schema: {
        summary: "The API key presented: its name, scope, permissions and approver groups",
        tags: ["auth"],
        response: { 200: me, ...errorResponses },
      },
    },
    async (request) => {
      const caller = request.caller;
      if (!caller) {
        return {
          name: null,
          scope: "admin",
          permissions: PERMISSIONS,
          groups: [],
          authenticated: false,
        };
      }
      return {
        name: caller.name,
        scope: caller.scope,
        permissions: permissionsOf(caller.scope),
        groups: caller.groups,
        authenticated: true,
      };
    },
  );
};
