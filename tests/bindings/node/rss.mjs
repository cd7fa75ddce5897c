// RSS flat within 10% over many requests (default 100,000) after a
// warm-up of 40,000 (measured here: RSS still grows by ~12% between 20,000
// and 40,000 -- V8's heap and malloc's arenas settling -- and is flat after)
// through a node:http server using the addon; the client is a child
// process. Last line: a JSON report.
import http from 'node:http';
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(process.cwd() + '/');
const { Context } = require('pgrest');
const TOTAL = Number(process.env.PGREST_NODE_RSS_REQUESTS || 100000);
const WARMUP = 40000;
const PATHS = ['/artists?id=eq.1', '/albums?select=title,artists(name)', '/rpc/add?a=1&b=2', '/nope'];

if (process.argv[2] === 'client') {
  // child: `count` requests over 32 keep-alive connections
  const port = Number(process.argv[3]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  let failures = 0;
  const one = (i) => new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: PATHS[i % PATHS.length], agent }, (res) => {
      res.resume();
      res.on('end', () => { if (res.statusCode >= 500) failures++; resolve(); });
    }).on('error', () => { failures++; resolve(); });
  });
  process.on('message', async ({ count }) => {
    let next = 0;
    const worker = async () => { while (next < count) await one(next++); };
    await Promise.all(Array.from({ length: 32 }, worker));
    process.send({ done: count, failures });
  });
} else {
  const ctx = new Context(JSON.parse(process.argv[2]));
  ctx.loadSchema();
  const server = http.createServer(ctx.handler());
  server.listen(0, '127.0.0.1', () => {
    const child = fork(new URL(import.meta.url).pathname, ['client', String(server.address().port)]);
    const steps = [WARMUP / 2, WARMUP / 2, TOTAL / 4, TOTAL / 4, TOTAL / 4, TOTAL / 4];
    const rss = [];
    const heap = [];
    let failures = 0;
    const t0 = performance.now();
    const runStep = () => child.send({ count: steps[rss.length] });
    child.on('message', (m) => {
      failures += m.failures;
      global.gc?.();
      rss.push(process.memoryUsage.rss());
      heap.push(process.memoryUsage().heapUsed);
      if (rss.length < steps.length) return runStep();
      const afterWarmup = rss[1];
      const end = rss[rss.length - 1];
      const growth = (end - afterWarmup) / afterWarmup;
      const seconds = (performance.now() - t0) / 1000;
      const tasks = ctx._taskCount();
      console.log(JSON.stringify({ ok: growth < 0.10 && failures === 0 && tasks.live === 0 && tasks.alive === 0,
        tasks,
        requests: TOTAL, warmup: WARMUP, seconds: +seconds.toFixed(1), requestsPerSecond: Math.round((TOTAL + WARMUP) / seconds),
        rssMiB: rss.map((r) => +(r / 1048576).toFixed(1)), growthPercent: +(growth * 100).toFixed(1),
        heapUsedMiB: heap.map((h) => +(h / 1048576).toFixed(1)),
        failures }));
      child.kill();
      server.close();
      server.closeAllConnections?.();
      setTimeout(() => process.exit(0), 100);
      return undefined;
    });
    runStep();
  });
}
