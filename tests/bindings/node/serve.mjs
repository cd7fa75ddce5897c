// A server using the installed pgrest package, for the runner:
//   node serve.mjs '<config JSON>' [http|express|fastify]
// prints "listening <port>" once the schema cache is loaded; listens for
// NOTIFY pgrst. The same handlers are mounted in each framework, the way
// docs/bindings.md shows, so that one set of requests checks all three:
//   node:http  at /         (no prefix)
//   express    at /rest     (app.use strips it)
//   fastify    at /rest     (the handler's prefix option strips it)
// Under the mount:
//   /          the handler with the Authorization header (JWT) as usual
//   /as-user/  the handler with the host's identity (role web_user, claims
//              {"role": "web_user", "sub": "node-host"}) handed over
//   /bulk-stream/  request bodies streamed into PostgreSQL past 64 KiB
//   /bulk-whole/   request bodies never streamed (collected whole)
// express and fastify are required from the working directory, where the
// runner installed them from package-lock.json.
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(process.cwd() + '/');
const { Context } = require('pgrest');

const ctx = new Context(JSON.parse(process.argv[2]));
ctx.loadSchema();
ctx.startListener(); // NOTIFY pgrst reloads the schema cache in this process
const identity = () => ({ role: 'web_user', claims: { role: 'web_user', sub: 'node-host' } });

// The two handlers under `mount` ('' when the framework strips it itself),
// as one (req, res, next) function.
function handlers(mount) {
  const asUser = ctx.handler({ prefix: mount + '/as-user', identity });
  const plain = ctx.handler({ prefix: mount });
  // request bodies streamed into PostgreSQL past 64 KiB, and never
  const bulkStream = ctx.handler({ prefix: mount + '/bulk-stream', streamBodyThreshold: 64 * 1024 });
  const bulkWhole = ctx.handler({ prefix: mount + '/bulk-whole', streamBodyThreshold: null });
  return (req, res, next) => bulkStream(req, res, () => bulkWhole(req, res,
    () => asUser(req, res, () => plain(req, res, next))));
}

function listen(server) {
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

const framework = process.argv[3] ?? 'http';
if (framework === 'http') {
  listen(http.createServer(handlers('')));
} else if (framework === 'express') {
  const express = require('express');
  const app = express();
  app.disable('x-powered-by'); // a header of Express's own, not PostgREST's
  app.use('/rest', handlers(''));
  listen(http.createServer(app));
} else if (framework === 'fastify') {
  const fastify = require('fastify')({ forceCloseConnections: true });
  // the handler reads the body from the raw stream: Fastify must leave it unread
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (req, payload, done) => done(null));
  const api = handlers('/rest');
  const route = (request, reply) => {
    reply.hijack();
    return api(request.raw, reply.raw);
  };
  fastify.all('/rest', route);
  fastify.all('/rest/*', route);
  fastify.listen({ port: 0, host: '127.0.0.1' }).then(() => {
    fastify.server.keepAliveTimeout = 60000;
    console.log('listening ' + fastify.server.address().port);
  });
  process.on('SIGTERM', () => fastify.close().then(() => process.exit(0)));
} else {
  throw new Error('unknown framework ' + framework);
}
