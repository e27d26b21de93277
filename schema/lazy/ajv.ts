import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

const ajv = {
  Ajv2020,
  addFormats: addFormatsModule as unknown as (ajv: Ajv2020) => void,
};

/**
 * ajv with its formats, for the forms of human tasks (engine/states/approval.ts,
 * `ResponseSchema`): few machines have forms, so the built CLI bundles it apart
 * (dist/cli/lazy-ajv.cjs) and loads it on the first call (scripts/build.ts,
 * lazyModules). Both in one bundle: ajv-formats builds code with ajv's own classes.
 * Here, run from the sources, ordinary imports.
 */
export function load(): typeof ajv {
  return ajv;
}
