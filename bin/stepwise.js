#!/usr/bin/env node
// Entry point installed as `stepwise`; the TypeScript sources are compiled to dist/ by `npm ci` (prepare).
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
