// 200 requests at once, each on pg_sleep(0.5) (api.slow), through a
// node:http server using the addon, on this one event loop; a 10 ms
// setInterval measures how late the loop runs meanwhile. The clients are
// in a child process so that only the server's work is on this loop.
import http from 'node:http';
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(process.cwd() + '/');
const { Context } = require('pgrest');
const N = 200;

if (process.argv[2] === 'client') {
  // child: N requests at once, reports the wall time
  const port = Number(process.argv[3]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: N });
  const one = () => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/rpc/slow?seconds=0.5', agent }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve(res.statusCode === 200 && body === '0.5'));
    }).on('error', reject);
  });
  const round = async () => {
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: N }, one));
    return { seconds: (performance.now() - t0) / 1000, allOk: results.every(Boolean) };
  };
  const warm = await round(); // opens the pool's connections
  process.send({ warmed: true });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const measured = await round();
  process.send({ warm, measured });
  agent.destroy();
  process.exit(0);
}

const ctx = new Context(JSON.parse(process.argv[2]));
ctx.loadSchema();
const server = http.createServer(ctx.handler());
server.listen(0, '127.0.0.1', () => {
  // lateness per round: the warm-up also opens the pool's 200 connections
  const lateMax = { warm: 0, measured: 0 };
  let round = 'warm';
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    lateMax[round] = Math.max(lateMax[round], now - last - 10);
    last = now;
  }, 10);
  const child = fork(new URL(import.meta.url).pathname, ['client', String(server.address().port)]);
  child.on('message', (m) => {
    if (m.warmed) {
      round = 'measured';
      return;
    }
    clearInterval(timer);
    const ok = m.measured.allOk && m.measured.seconds < 2.5 && lateMax.measured < 100;
    console.log(JSON.stringify({ ok, requests: N, warmSeconds: +m.warm.seconds.toFixed(3),
      seconds: +m.measured.seconds.toFixed(3),
      maxTimerLatenessMs: +lateMax.measured.toFixed(1),
      warmMaxTimerLatenessMs: +lateMax.warm.toFixed(1) }));
    server.close();
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 100);
  });
});
