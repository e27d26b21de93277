/**
 * JSONPath as AWS Step Functions evaluates it (Jayway JsonPath semantics plus
 * `$$` for the context object and `$name` for workflow variables).
 */
export {
  parsePath,
  isReferencePath,
  isValidPath,
  PathSyntaxError,
  PATH_FUNCTIONS,
} from "./parse.js";
export { readPath, evaluatePath, pathValue, rootValue } from "./evaluate.js";
export type { PathScope, PathResult } from "./evaluate.js";
export { writeReferencePath } from "./write.js";
export {
  PathLimitExceeded,
  configurePathLimits,
  pathLimits,
  DEFAULT_PATH_LIMITS,
} from "./budget.js";
export type { PathLimits } from "./budget.js";
export { missingPathCause, invalidPathCause, missingPathReason } from "./messages.js";
export type { PathExpr, PathRoot, Segment, FilterExpr, FilterOperand } from "./ast.js";
export { renderPath } from "./ast.js";
