#!/usr/bin/env -S node --max-semi-space-size=64
// Entry point installed as `stepwise`; the TypeScript sources are compiled to dist/ by `npm ci` (prepare).
//
// --max-semi-space-size=64 (MB; V8's default is 16): a worker allocates tens of KB per
// transition that die within milliseconds, and its young generation is collected by
// copying what is alive. With 16 MB, collections come four times as often, each copies
// the same transitions in flight, and a burst of 50,000 fired timers spent a quarter of
// the worker's CPU there (issue 21). The space grows only under such load. V8 reads the
// flag once, at start: it cannot be set from here, hence the shebang (and the Dockerfile).
import { main } from "../dist/cli/main.js";

const io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  isTTY: process.stderr.isTTY === true,
  stdoutTTY: process.stdout.isTTY === true,
};
main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`stepwise: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
