import { spawn } from "node:child_process";
import { Redis } from "ioredis";
const port = 6392;
const server = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no"], { stdio: "ignore" });
await new Promise((r) => setTimeout(r, 300));
const redis = new Redis(`redis://127.0.0.1:${port}`);
const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info("memory"))![1]);
const N = 10000;
const x = (i: number) => ({st:"RUNNING",sm:"park",v:"1",in:`{"order":"o-${i}"}`,ih:"viRywX3jJ426fe9hQTFiIA",t0:"2026-12-02T07:32:25.447Z",hc:"4",nm:`p${i}`,hh:"87e24fdd7670a64aff9a072fb9cb9351917e7fee7bfb440c959def25afee28ca",hg:"DwHhQZrNeRU",tr:"b6aa040ea6c4771ebbb01a8f9e3e3e75"});
const r = (i: number) => ({q:"1",n:"3",s1:`\u001f\u001e}park:p${i}\u0012\u0013\u00140\u00154\u00161\u001eH533f5da2d55dd1cd75415da1bf050f13"\u0017Approve","`.slice(0,64),s2:`input":{"order":"o-${i}"}\u0018"\u001dmx5t5zax"\u00192\u001atask\u001eApark:p${i}#1"\u001e;]\u001e<s14-J4`.slice(0,64),s3:"NYnlQ2f9iZ1iHpvMVIeg\"}\u001eIcec33f3e1400e0cd72d48fd46464b294\"}}"});
const roleFull = `","roleArn":"arn:aws:iam::000000000000:role/stepwise"}`;
const h = (i: number, short: boolean) => [`\u001f\u00011\u00020\u0003"\u001dmx5t5zax"\u0004\n{\torder\t:\to-${i}\t}${short ? "\u001eX" : roleFull}\u001eGMfYilEBet_4"}`,`\u001f\u00012\u00021\u0003"\u001dmx5t5zax"\u0004\u001e^\u0005Approve\u0007{\torder\t:\to-${i}\t}"}\u001eGQ391fX51bug"}`,`\u001f\u00013\u00022\u0003"\u001dmx5t5zax"\u0004\u001e^\fstepwise\u000fwaitFor\u001e^Token\u0010{\ttoken\t:\ts14-J4NYnlQ2f9iZ1iHpvMVIeg\t,\torder\t:\to-${i}\t}"\u001eIcec33f3e1400e0cd72d48fd46464b294"}\u001eGQok7XarpD9c"}`,`\u001f\u00014\u00023\u0003"\u001dmx5t5zax"\u0004\u001e^\rstepwise\u000fwaitFor\u001e^Token"}\u001eGh-JP3XZwpko"}`];
const j = (i: number, drop: boolean) => [ ...(drop ? [] : [`\u001f\u001e}park:p${i}\u001bStarted","input":{"order":"o-${i}"}\u001eH533f5da2d55dd1cd75415da1bf050f13"\u001c"\u001dmx5t5zax"\u001e#1}}`]),`\u001f\u001e}park:p${i}\u001b\u001e$\u001c"\u001dmx5t5zax"\u001e#3\u001e%s14-J4NYnlQ2f9iZ1iHpvMVIeg"}}`];
async function variant(name: string, write: (i: number, p: ReturnType<Redis["pipeline"]>) => void) {
  await redis.flushall(); await new Promise((r) => setTimeout(r, 100));
  const b = await used();
  for (let s = 0; s < N; s += 1000) { const p = redis.pipeline(); for (let i = s; i < s + 1000; i++) write(i, p); await p.exec(); }
  console.log(name.padEnd(30), ((await used() - b) / N).toFixed(0));
}
const K = (k: string, i: number) => `stepwise:{sw:${i % 16}}:${k}:park:p${i}`;
const xn = (i: number) => { const v: any = x(i); delete v.tr; return v; };
const gen = (i: number) => `WEHfKS9F5DHQU${String(i).padStart(7,"0")}`;
for (const [label, nm] of [["p", (i: number) => `p${i}`], ["gen20", gen]] as const) {
  const key = (i: number) => `stepwise:{sw:${i % 16}}:x:park:${nm(i)}`;
  await variant(`x ${label}`, (i, p) => p.hset(key(i), { ...xn(i), nm: nm(i) }));
  await variant(`x ${label} t0 short`, (i, p) => p.hset(key(i), { ...xn(i), nm: nm(i), t0: "mx5t5zax" }));
  await variant(`x ${label} no in`, (i, p) => { const v = { ...xn(i), nm: nm(i) }; delete v.in; p.hset(key(i), v); });
  await variant(`x ${label} hh b64`, (i, p) => p.hset(key(i), { ...xn(i), nm: nm(i), hh: "h-JP3XZwpkoh-JP3XZwpkoh-JP3XZwpkoh-JP3XZwpko" }));
  await variant(`x ${label} hh b64 t0 short`, (i, p) => p.hset(key(i), { ...xn(i), nm: nm(i), t0: "mx5t5zax", hh: "h-JP3XZwpkoh-JP3XZwpkoh-JP3XZwpkoh-JP3XZwpko" }));
  await variant(`x ${label} no nm`, (i, p) => { const v = { ...xn(i) }; delete v.nm; p.hset(key(i), v); });
}
await variant("tasks json", (i, p) => p.hset(`stepwise:{sw:${i % 16}}:tasks`, `park:p${i}#1`, `{"mode":"park","token":"s14-KtsIOZLulhsTTQfuWPT6XA","at":1796196750077}`));
await variant("tasks no at", (i, p) => p.hset(`stepwise:{sw:${i % 16}}:tasks`, `park:p${i}#1`, `{"mode":"park","token":"s14-KtsIOZLulhsTTQfuWPT6XA"}`));
await variant("tasks gen json", (i, p) => p.hset(`stepwise:{sw:${i % 16}}:tasks`, `park:${gen(i)}#1`, `{"mode":"park","token":"s14-KtsIOZLulhsTTQfuWPT6XA","at":1796196750077}`));
await variant("tasks gen no at", (i, p) => p.hset(`stepwise:{sw:${i % 16}}:tasks`, `park:${gen(i)}#1`, `{"mode":"park","token":"s14-KtsIOZLulhsTTQfuWPT6XA"}`));
redis.disconnect(); server.kill(); process.exit(0);
