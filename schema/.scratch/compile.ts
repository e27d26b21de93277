import { schemaErrors } from "../compile.js";
const t0 = performance.now();
console.log(schemaErrors({ StartAt: "A", States: { A: { Type: "Pass", End: true } } }));
console.log(performance.now() - t0);
for (const e of schemaErrors({ StartAt: "A", Foo: 1, States: { A: { Type: "Task", End: true, TimeoutSeconds: -1, TimeoutSecondsPath: "$.x", Bar: 2, Retry: [{ErrorEquals: []}] }, B: {Type: "Wait"}, C: {Type: "Nope"}, D: {Type: "Map", ItemProcessor: {StartAt: "x", States: {x: {Type: "Pass", End: true, Foo: 1}}, ProcessorConfig: {Mode: "INLINE"}}} } }))
  console.log(e.instancePath, e.schemaPath, e.keyword, e.params, e.message);
