import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { _, Ajv2020 } from "ajv/dist/2020.js";
import standaloneCode from "ajv/dist/standalone/index.js";
import { build, type BuildOptions, type Plugin } from "esbuild";
import { aslSchema } from "../schema/asl/bundle.js";
import { isRfc3339Timestamp } from "../schema/timestamp.js";
import { ASL_AJV_OPTIONS } from "../schema/compile.js";

/**
 * Builds what `bin/stepwise.js` runs: dist/cli/main.js (and dist/cli/api-process.js,
 * which `serve --api-processes N` forks, and dist/cli/evaluation-thread.js, the
 * thread heavy steps run on), bundled by esbuild with the dependencies in.
 *
 * Why a bundle and not tsc's one file per module: a process starts by loading its
 * modules, and loading ~370 of ours and ~900 of fastify, ajv, BullMQ and ioredis one
 * file at a time (resolve, stat, read, compile each) was most of `stepwise serve`'s
 * start-up: 2.1 s of CPU before it answered, 1.4 s bundled (scripts/start-cost.ts).
 * Every test that starts the binary, and every container start, pays it.
 *
 * - Code splitting keeps the CLI's lazy commands lazy: `stepwise executions list`
 *   loads the HTTP client's chunks, not fastify and BullMQ.
 * - Chunks sit beside the entries in dist/cli/, so that a path a module computes from
 *   its own `import.meta.url` (`./api-process.js`, `../../console/dist/`) resolves as it
 *   did from tsc's dist/cli/ and dist/api/plugins/.
 * - msgpackr-extract (a native addon msgpackr loads when present) stays a package:
 *   its loader finds its prebuilt binary relative to its own files.
 * - The ASL schema's validator is compiled by ajv here, not at run time
 *   (precompiledAslSchema, below): compiling it was most of what `stepwise validate`
 *   and `stepwise test` spent (~250 ms of CPU in every process that validates).
 * - `validate`, `run` and `test` run from one CommonJS bundle of their own,
 *   dist/cli/local-<hash>.cjs (localBuildOptions), compiled through V8's code cache.
 * - yaml, jsonata and ajv (for forms) are bundled apart, dist/cli/lazy-<name>.cjs, and
 *   loaded on first use (lazyModules). Fixed names: each holds a package and nothing
 *   of ours, so a process that loads one from a newer build gets the same package.
 * - Types are not checked here (esbuild strips them): `npm run lint` does, in CI.
 *
 *   npm run build            # also run by `npm ci` (prepare) and by the tests when sources changed
 */

const ROOT = resolve(import.meta.dirname, "..");
export const DIST = resolve(ROOT, "dist");
/** The modules of schema/lazy/ (lazyModules, below). */
export const LAZY_MODULES = ["yaml", "jsonata", "ajv"] as const;

/**
 * The local commands (`validate`, `run`, `test`; cli/local.ts) once more, as one
 * CommonJS file, dist/cli/local-<hash>.cjs, which cli/main.ts loads through V8's code
 * cache (cli/compile-cache.ts): an ES module cannot use it on Node 20, and compiling
 * was most of those short processes' time. The file name's hash is its content's, so
 * a cache entry named by it never meets another build's code.
 *
 * - `import.meta` is the file's own (`__filename`), so paths computed from it resolve
 *   from dist/cli/ as in the chunks; an `import.meta` esbuild cannot map is an error.
 * - Nothing in it may call `import()`: code restored from V8's cache loses its
 *   dynamic-import callback on Node 20. cli/local.ts is handed the loader's instead;
 *   a test runs `run --tasks` through the binary.
 */
export const localBuildOptions = {
  absWorkingDir: ROOT,
  entryPoints: { "cli/local": "cli/local.ts" },
  outdir: DIST,
  entryNames: "[dir]/[name]-[hash]",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  external: ["msgpackr-extract"],
  define: {
    "import.meta.url": "__stepwiseImportMetaUrl",
    "import.meta.dirname": "__dirname",
    "import.meta.filename": "__filename",
  },
  banner: {
    js: 'const __stepwiseImportMetaUrl = require("node:url").pathToFileURL(__filename).href;',
  },
  logOverride: { "empty-import-meta": "error" },
  sourcemap: "linked",
  legalComments: "linked",
  logLevel: "warning",
  metafile: true,
  plugins: [precompiledAslSchema(), lazyModules()],
} satisfies BuildOptions;

export const productBuildOptions = {
  absWorkingDir: ROOT,
  entryPoints: ["cli/main.ts", "cli/api-process.ts", "cli/evaluation-thread.ts"],
  outbase: ".",
  outdir: DIST,
  chunkNames: "cli/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["msgpackr-extract"],
  // CommonJS dependencies call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __stepwiseCreateRequire } from 'node:module'; const require = __stepwiseCreateRequire(import.meta.url);",
  },
  sourcemap: "linked",
  legalComments: "linked",
  logLevel: "warning",
  plugins: [precompiledAslSchema(), lazyModules()],
} satisfies BuildOptions;

/**
 * Packages few processes need, each behind a module of schema/lazy/ whose `load()`
 * returns it: YAML (only YAML definitions and endpoint files), `jsonata` (only
 * JSONata machines' checks) and ajv with its formats (only human-task forms). Each is
 * bundled apart, as dist/cli/lazy-<name>.cjs, and the bundles above get, for its
 * module, one that requires that file on the first `load()` (lazyModules): ~0.5 MB of
 * JavaScript that `stepwise test` and `validate` of JSONPath machines no longer read,
 * compile and evaluate. Synchronous, as the code calling them is; CommonJS, as
 * `require` of an ES module needs Node 22.
 */
export const lazyBuildOptions = {
  absWorkingDir: ROOT,
  entryPoints: Object.fromEntries(
    LAZY_MODULES.map((name) => [`cli/lazy-${name}`, `schema/lazy/${name}.ts`]),
  ),
  outdir: DIST,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  legalComments: "linked",
  logLevel: "warning",
} satisfies BuildOptions;

export function lazyModules(): Plugin {
  const names = new Map<string, string>(
    LAZY_MODULES.map((name) => [join(ROOT, "schema", "lazy", `${name}.ts`), name]),
  );
  return {
    name: "lazy-modules",
    setup(build) {
      build.onLoad({ filter: /[\\/]schema[\\/]lazy[\\/][^\\/]+\.ts$/ }, (args) => {
        const name = names.get(args.path);
        if (name === undefined) throw new Error(`${args.path}: not in LAZY_MODULES`);
        return {
          contents: `let loaded;\nexport function load() {\n  return (loaded ??= require("./lazy-${name}.cjs").load());\n}\n`,
          loader: "js",
        };
      });
      // Required at run time from dist/cli/, beside the chunks and the local bundle.
      build.onResolve({ filter: /^\.\/lazy-[a-z0-9-]+\.cjs$/ }, (args) => ({
        path: args.path,
        external: true,
      }));
    },
  };
}

/**
 * Serves schema/index.ts's `./compile.js` (schema/compile.ts, which compiles the ASL
 * schema with ajv on first use, ~250 ms of CPU) as ajv's standalone code for the same
 * schema, generated here once per build. Same options as compileAslSchema (checked by
 * test/cli/precompiled-schema.test.ts, which compares the binary's diagnostics with the
 * sources' on the validation corpus), so the same errors.
 *
 * ajv-diagnostics.ts folds union errors by comparing an error's `parentSchema` with
 * objects of `aslSchema` by identity, so the generated code must not hold copies of
 * the schema, as ajv's standalone code does: each schema it refers to is looked up in
 * the bundled `aslSchema` by its JSON pointer instead.
 */
export function precompiledAslSchema(): Plugin {
  const compileModule = join(ROOT, "schema", "compile.ts");
  return {
    name: "precompiled-asl-schema",
    setup(build) {
      build.onResolve({ filter: /^\.\/compile\.js$/ }, (args) =>
        resolve(args.resolveDir, "compile.ts") === compileModule
          ? { path: compileModule, namespace: "precompiled-asl-schema" }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: "precompiled-asl-schema" }, () => ({
        contents: precompiledAslSchemaModule(),
        loader: "js",
        resolveDir: dirname(compileModule),
      }));
    },
  };
}

/**
 * Fails the build if the local commands' bundle calls `import()` (localBuildOptions):
 * it would work on a first run and fail from the code cache. The one allowed is
 * cli/tasks-module.ts's default importer, which cli/local.ts replaces.
 */
function checkNoDynamicImport(file: string): void {
  const calls = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => /\bimport\s*\(/.test(line) && !/^\s*(\*|\/\/)/.test(line))
    .filter((line) => !/^var importModule = \(specifier\) => import\(specifier\);$/.test(line));
  if (calls.length > 0) {
    throw new Error(
      `${relative(ROOT, file)} calls import(), which fails from V8's code cache on Node 20; ` +
        `pass the loader's in, as cli/local.ts does for tasks modules:\n${calls.join("\n")}`,
    );
  }
}

let precompiled: string | undefined;

/** The module that stands for schema/compile.ts in the bundle. */
export function precompiledAslSchemaModule(): string {
  return (precompiled ??= generatePrecompiledAslSchemaModule());
}

function generatePrecompiledAslSchemaModule(): string {
  const ajv = new Ajv2020({
    // As compileAslSchema (schema/compile.ts) …
    ...ASL_AJV_OPTIONS,
    validateSchema: false,
    // … plus source code, as an ES module, with the formats from `formats` below.
    code: { source: true, esm: true, formats: _`formats` },
  });
  ajv.addFormat("asl-timestamp", { type: "string", validate: isRfc3339Timestamp });
  const validate = ajv.compile(aslSchema);
  const pointers = new Map<object, string>();
  const walk = (value: unknown, pointer: string): void => {
    if (typeof value !== "object" || value === null || pointers.has(value)) return;
    pointers.set(value, pointer);
    for (const [key, child] of Object.entries(value)) {
      walk(child, `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`);
    }
  };
  walk(aslSchema, "");
  // ajv's scope of values (private): the `schema` entries are the schema objects the
  // code refers to; their `code` is what the standalone module declares them as.
  interface Named {
    value?: { ref: unknown; code?: unknown };
  }
  const scope = (ajv as unknown as { scope: { _values: Record<string, Map<unknown, Named>> } })
    .scope;
  for (const name of scope._values.schema?.values() ?? []) {
    const pointer = pointers.get(name.value?.ref as object);
    if (pointer === undefined) throw new Error("precompiled ASL schema: a schema not in aslSchema");
    name.value!.code = _`schemaAt(${pointer})`;
  }
  const code = (standaloneCode as unknown as typeof standaloneCode.default)(ajv, validate);
  const head = '"use strict";export const validate = validate0;export default validate0;';
  if (!code.startsWith(head)) throw new Error("precompiled ASL schema: unexpected ajv output");
  return `// Generated by scripts/build.ts (precompiledAslSchema) from schema/asl/.
import { aslSchema } from "./asl/bundle.js";
import { isRfc3339Timestamp } from "./timestamp.js";
const formats = { "asl-timestamp": { type: "string", validate: isRfc3339Timestamp } };
function schemaAt(pointer) {
  let at = aslSchema;
  for (const key of pointer.split("/").slice(1)) at = at[key.replaceAll("~1", "/").replaceAll("~0", "~")];
  return at;
}
${code.slice(head.length)}
export function schemaErrors(value) {
  return validate0(value) ? [] : [...(validate0.errors ?? [])];
}
`;
}

/**
 * Builds into a staging directory, then moves each file into dist/ by rename (atomic):
 * chunks before the entries that import them. A `stepwise` process started while
 * another test run rebuilds (two runs of vitest side by side) finds either the old
 * entry with its chunks or the new one with its chunks, never a half-written file or
 * an emptied dist/. `clean` (npm run build, prepare) also removes the chunks of
 * earlier builds; the tests' rebuild leaves them, for processes still loading them.
 */
export async function buildProduct({ clean = true }: { clean?: boolean } = {}): Promise<void> {
  const staging = `${DIST}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  try {
    await build({ ...lazyBuildOptions, outdir: staging });
    const local = await build({ ...localBuildOptions, outdir: staging });
    const localFile = Object.keys(local.metafile.outputs).find((f) => f.endsWith(".cjs"))!;
    checkNoDynamicImport(join(ROOT, localFile));
    await build({
      ...productBuildOptions,
      outdir: staging,
      // The name cli/main.ts loads the local commands' bundle by.
      define: { __stepwiseLocalBundle: JSON.stringify(basename(localFile)) },
    });
    const built = filesUnder(staging).map((path) => relative(staging, path));
    const entries = new Set(["cli/main.js", "cli/api-process.js"]);
    const ordered = [
      ...built.filter((f) => !entries.has(f)),
      ...built.filter((f) => entries.has(f)),
    ];
    for (const file of ordered) {
      mkdirSync(dirname(join(DIST, file)), { recursive: true });
      renameSync(join(staging, file), join(DIST, file));
    }
    if (clean) {
      const keep = new Set(built);
      for (const path of filesUnder(DIST)) {
        if (!keep.has(relative(DIST, path))) rmSync(path, { force: true });
      }
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function filesUnder(dir: string): string[] {
  let files: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return files;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    files = entry.isDirectory() ? [...files, ...filesUnder(path)] : [...files, path];
  }
  return files;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  await buildProduct();
}
