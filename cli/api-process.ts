// The entry of an API process that `serve` forks when STEPWISE_API_PROCESSES > 1
// (cli/api-processes.ts): the same `serve`, told by its environment that it is a child.
import cluster from "node:cluster";
import { main } from "./main.js";

const io = {
  stdout: (text: string) => process.stdout.write(text),
  stderr: (text: string) => process.stderr.write(text),
  isTTY: false,
  stdoutTTY: false,
};
process.exitCode = await main(process.argv.slice(2), io);
// The channel to the primary would keep this process alive after serve has closed.
cluster.worker?.disconnect();
