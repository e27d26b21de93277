#!/usr/bin/env node
// Entry point installed as `stepwise`; the TypeScript sources are compiled to dist/ by `npm ci` (prepare).
//
// Worker processes under heavy load do better with a larger young generation, which
// V8 takes only at start: `node --max-semi-space-size=64 bin/stepwise.js worker`, or
// NODE_OPTIONS=--max-semi-space-size=64 (the Dockerfile's ENTRYPOINT passes it; README,
// "Running the service"). Not in the shebang: `env -S` is missing from BusyBox (Alpine).
import { main } from "../dist/cli/main.js";

const io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  isTTY: process.stderr.isTTY === true,
  stdoutTTY: process.stdout.isTTY === true,
};
// main answers every usage, configuration and connection error itself (one line, exit 2
// or 1); what it throws is a bug, and its stack is the bug report (exit 70, EX_SOFTWARE).
main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(
      `stepwise: internal error (a bug in stepwise; please report it with this trace):\n${err?.stack ?? err}\n`,
    );
    process.exitCode = 70;
  },
);
