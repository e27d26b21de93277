// The shape of runtime/ against issue 42's limits: `npx tsx scripts/runtime-shape.ts`
// prints each folder's file count, then every file over 450 lines and every
// function over 80 lines, and exits 1 when anything is over.
import { shapeOf, LIMITS } from "../test/runtime/shape.js";

const shape = shapeOf("runtime");
for (const folder of shape.folders) {
  const mark = folder.files > LIMITS.filesPerFolder ? "  <- over" : "";
  console.log(`${String(folder.files).padStart(4)} files  ${folder.path}${mark}`);
}
for (const file of shape.longFiles) console.log(`${file.lines} lines  ${file.path}`);
for (const fn of shape.longFunctions)
  console.log(`${fn.lines} lines  ${fn.path}:${fn.line} ${fn.name}`);
const over =
  shape.folders.filter((f) => f.files > LIMITS.filesPerFolder).length +
  shape.longFiles.length +
  shape.longFunctions.length;
console.log(over === 0 ? "runtime/ is within its limits" : `${over} over the limits`);
process.exit(over === 0 ? 0 : 1);
