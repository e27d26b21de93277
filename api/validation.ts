import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";
import type { FastifyInstance } from "fastify";
import { apiError, type ApiError } from "./errors.js";
import { PATTERN_RULES } from "./schemas.js";

/**
 * Request validation. Bodies are validated strictly (no type coercion: `"name": 123`
 * is an error, not "123"; unknown fields are errors, not silently dropped), while
 * query strings and path parameters are text by nature and are coerced ("?limit=10").
 */
const common: Options = {
  allErrors: false,
  useDefaults: true,
  removeAdditional: false,
  strict: false,
  // The route schemas are ours, and test/e2e/fuzz.test.ts checks and compiles every
  // one; checking them against the meta-schema at each start compiled that too.
  validateSchema: false,
};
const bodyAjv = new Ajv({ ...common, coerceTypes: false });
const textAjv = new Ajv({ ...common, coerceTypes: true });
// `format: "date-time"` on request fields (bulk operations' instants) is checked, not ignored.
const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats: string[]) => void;
addFormats(bodyAjv, ["date-time"]);
addFormats(textAjv, ["date-time"]);

/**
 * Validators are compiled on a route's first request, not when the route is
 * registered: the API has ~150 route schemas, compiling them all cost every start
 * ~140 ms of CPU, and most processes (a test's, a worker's) answer a handful of routes.
 */
export function registerValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) =>
    lazyValidator(() => (httpPart === "body" ? bodyAjv : textAjv).compile(schema)),
  );
}

/** A validator that compiles itself on first call; fastify reads `.errors` after a false. */
export function lazyValidator(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

/**
 * Response serializers (fast-json-stringify), likewise compiled on a route's first
 * answer of each status, not at start: fastify compiled all of them when the routes
 * were registered, ~75 ms of every start's CPU (bench/start-cost.ts). Fastify's own
 * serializer factory does the compiling, with the shared schemas as it would pass
 * them; test/e2e/fuzz.test.ts compiles every response schema once.
 */
export const lazySerializers = {
  buildSerializer(externalSchemas?: unknown, options?: SerializerOptions) {
    const compile = SerializerSelector()(externalSchemas, options);
    return (route: Parameters<typeof compile>[0]) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc: unknown) => (serialize ??= compile(route))(doc);
    };
  },
};

type SerializerOptions = Parameters<ReturnType<typeof SerializerSelector>>[1];

const LOCATIONS: Record<string, string> = {
  body: "body",
  querystring: "query string",
  params: "path",
  headers: "headers",
};

/** The JSON pointer of the field an ajv error is about (missing and unknown fields included). */
function pointerOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    return `${error.instancePath}/${params.missingProperty}`;
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    return `${error.instancePath}/${params.additionalProperty}`;
  }
  return error.instancePath;
}

function describe(error: ErrorObject, pointer: string): string {
  const field = pointer === "" ? "the value" : `'${pointer.slice(1).replace(/\//g, ".")}'`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `${field} is required`;
    case "additionalProperties":
      return `${field} is not a known field`;
    case "pattern": {
      const pattern = String(params.pattern);
      const rule = PATTERN_RULES.get(pattern);
      return rule ? `${field} must be ${rule}` : `${field} must match ${pattern}`;
    }
    case "enum":
      return `${field} must be one of ${(params.allowedValues as unknown[]).map(String).join(", ")}`;
    case "format":
      return `${field} must be an RFC 3339 date-time such as 2026-12-01T09:30:00Z`;
    default:
      return `${field} ${error.message ?? "is invalid"}`;
  }
}

/** Turns fastify's FST_ERR_VALIDATION into InvalidRequest naming the field. */
export function validationError(
  errors: readonly ErrorObject[],
  context: string | undefined,
): ApiError {
  const location = LOCATIONS[context ?? "body"] ?? context ?? "body";
  const details = errors.map((error) => {
    const path = pointerOf(error);
    return { location: context ?? "body", path, message: describe(error, path) };
  });
  const first = details[0]?.message ?? "malformed";
  return apiError("InvalidRequest", { location, reason: first }, details);
}
