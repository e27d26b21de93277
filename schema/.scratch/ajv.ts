import { schemaErrors } from "../compile.js";
import { schemaDiagnostics } from "../ajv-diagnostics.js";
const defs: unknown[] = [
  { StartAt: "A", Foo: 1, States: { A: { Type: "Task", End: true, TimeoutSeconds: -1, TimeoutSecondsPath: "$.x", Bar: 2, Retry: [{ErrorEquals: [], IntervalSecond: 3}], Credentials: {} }, B: {Type: "Wait"}, C: {Type: "Nope"}, D: {Type: "Map", ItemProcessor: {StartAt: "x", States: {x: {Type: "Pass", End: true, bugInputPath: 1}}, ProcessorConfig: {Mode: "INLINE"}}} } },
  { States: { W: { Type: "Wait", Seconds: 1, Timestamp: "2016-12-05 21:29:29Z", End: true }, C: { Type: "Choice", Next: "x", Choices: [{ Variable: "$.a", NumericEquals: 1, End: true }, {And: [{Variable: "$.x", IsNull: true, Next: "y"}], Next: "z"}] }, F: {Type: "Fail", Error: "x", ErrorPath: "$.e"} , T: {Type: "Task", Resource: "x", Credentials: null, Catch: [{"Error Equals": ["x"], Next: "y"}]}, M: {Type: "Map"}} },
  { StartAt: "S", States: { W: { Type: "Wait", Timestamp: "2016-12-05T25:29:29Z", End: true }, Q: {Type: "Pass", QueryLanguage: "SQL", End: true} }, Version: "2.0" },
];
for (const d of defs) {
  const t0 = performance.now();
  const ds = schemaDiagnostics(schemaErrors(d));
  console.log("----", (performance.now() - t0).toFixed(2));
  for (const x of ds) console.log(x.code, x.path, "|", x.message);
}
