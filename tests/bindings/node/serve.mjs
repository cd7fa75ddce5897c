// A node:http server using the installed pgrest package, for the runner:
//   node serve.mjs '<config JSON>'
// prints "listening <port>" once the schema cache is loaded; listens for
// NOTIFY pgrst. Mounts:
//   /          the handler with the Authorization header (JWT) as usual
//   /as-user/  the handler with the host's identity (role web_user, claims
//              {"role": "web_user", "sub": "node-host"}) handed over
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(process.cwd() + '/');
const { Context } = require('pgrest');

const ctx = new Context(JSON.parse(process.argv[2]));
ctx.loadSchema();
ctx.startListener(); // NOTIFY pgrst reloads the schema cache in this process
const asUser = ctx.handler({
  prefix: '/as-user',
  identity: () => ({ role: 'web_user', claims: { role: 'web_user', sub: 'node-host' } }),
});
const plain = ctx.handler();
const server = http.createServer((req, res) => asUser(req, res, () => plain(req, res)));
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
