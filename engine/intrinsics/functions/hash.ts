import type { IntrinsicTable } from "./types.js";
import { intrinsicFailure, stringArg } from "./types.js";
import { md5Hex } from "../digest/md5.js";
import { sha1Hex } from "../digest/sha1.js";
import { sha256Hex } from "../digest/sha256.js";
import { sha384Hex, sha512Hex } from "../digest/sha512.js";

/**
 * "Intrinsic for hash calculation": States.Hash(data, algorithm), lowercase hex
 * of the UTF-8 bytes. The algorithms AWS lists; the input is limited to 10,000
 * characters. Pure TypeScript because the engine may not import node:crypto.
 */
const ALGORITHMS: Readonly<Record<string, (bytes: Uint8Array) => string>> = {
  MD5: md5Hex,
  "SHA-1": sha1Hex,
  "SHA-256": sha256Hex,
  "SHA-384": sha384Hex,
  "SHA-512": sha512Hex,
};
const MAX_INPUT_CHARS = 10_000;

export const HASH_FUNCTIONS: IntrinsicTable = {
  "States.Hash": {
    minArgs: 2,
    maxArgs: 2,
    evaluate(args, context) {
      const data = stringArg(args, 0, context);
      const algorithm = stringArg(args, 1, context);
      if (data.length > MAX_INPUT_CHARS) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the input data has ${data.length} characters; the limit is ${MAX_INPUT_CHARS}.`,
        );
      }
      const hash = Object.hasOwn(ALGORITHMS, algorithm) ? ALGORITHMS[algorithm] : undefined;
      if (hash === undefined) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the algorithm '${algorithm}' is not supported; use one of ${Object.keys(ALGORITHMS).join(", ")}.`,
        );
      }
      return hash(new TextEncoder().encode(data));
    },
  },
};
