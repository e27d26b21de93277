import type { FastifyPluginAsync } from "fastify";
import { permissionsOf, type Permission } from "../auth.js";
import { errorResponses, me } from "../schemas.js";
import type { PluginOptions } from "../server.js";
import type * as Shapes from "../shapes.js";

/**
 * `GET /v1/me`: who the presented key is and what it may do, so a client (the
 * console) can ask for a key only when one is needed and hide what the key cannot
 * do. With no keys configured (the loopback-only service), everyone is `admin`.
 */
const PERMISSIONS = permissionsOf("admin");

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
    async (request): Promise<Shapes.Me> => {
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
