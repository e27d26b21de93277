/**
 * Reads samples out of the Prometheus text exposition format, for asserting what
 * /metrics reports (values, not just that a line exists).
 */
export function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      found[pair[1]!] = pair[2]!;
    }
    const wanted = Object.entries(labels);
    if (Object.keys(found).length !== wanted.length) continue;
    if (wanted.every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}
