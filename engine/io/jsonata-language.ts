import { StatesError } from "../core/errors.js";
import type { LanguageIO } from "./language.js";

// Placeholder until the JSONata work lands: refuses clearly instead of misbehaving.
function unsupported(): never {
  throw new StatesError("States.Runtime", "JSONata states are not supported yet");
}

export const jsonataLanguage: LanguageIO = {
  pass: unsupported,
  arguments: unsupported,
  result: unsupported,
  choose: unsupported,
  wait: unsupported,
  succeed: unsupported,
  fail: unsupported,
  catchOutput: unsupported,
  mapItems: unsupported,
  mapItemInput: unsupported,
  number: unsupported,
};
