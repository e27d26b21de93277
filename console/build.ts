import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build, type BuildOptions } from "esbuild";

/**
 * Builds the console into console/dist/: one hashed JS bundle, one hashed CSS
 * file and index.html naming them. Runs at install (`prepare`) like the
 * TypeScript build, so the service serves files and needs no network at run time.
 *
 *   npx tsx console/build.ts        # or: npm run build:console
 */

const here = dirname(fileURLToPath(import.meta.url));
export const CONSOLE_DIST = join(here, "dist");

export interface BuiltFile {
  name: string;
  bytes: number;
  gzipBytes: number;
}

/** esbuild's options for the bundle (test/console/shapes.test.ts reads what goes in). */
export function consoleBuildOptions(outDir: string) {
  return {
    entryPoints: { app: join(here, "src/main.tsx") },
    outdir: outDir,
    entryNames: "[name]-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2022"],
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
    absWorkingDir: resolve(here, ".."),
  } satisfies BuildOptions;
}

export async function buildConsole(outDir = CONSOLE_DIST): Promise<BuiltFile[]> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const result = await build(consoleBuildOptions(outDir));
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((n) => n.endsWith(".js"));
  const css = outputs.find((n) => n.endsWith(".css"));
  if (!js || !css) throw new Error(`console build: expected a .js and a .css, got ${outputs}`);
  const template = await readFile(join(here, "index.html"), "utf8");
  await writeFile(join(outDir, "index.html"), template.replace("%JS%", js).replace("%CSS%", css));
  const files: BuiltFile[] = [];
  for (const name of ["index.html", js, css]) {
    const content = await readFile(join(outDir, name));
    files.push({ name, bytes: content.length, gzipBytes: gzipSync(content).length });
  }
  return files;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = await buildConsole();
  const total = files.reduce((sum, f) => sum + f.gzipBytes, 0);
  for (const f of files) {
    console.log(`console/dist/${f.name}  ${f.bytes} bytes, ${f.gzipBytes} gzipped`);
  }
  console.log(`console: ${(total / 1024).toFixed(1)} KiB gzipped in all`);
}
