// Compiled by tsc --noEmit --strict (tests/bindings/node/run.py), never run:
// the API used as docs/bindings.md shows it, so that index.d.ts is checked
// against real uses, not only parsed.
import http from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import { Context, PgrestError, version, postgrestVersion } from 'pgrest';
import type { Handler, HandlerOptions, Identity, Options } from 'pgrest';

const options: Options = {
  'db-uri': 'postgresql://authenticator@localhost/app',
  'db-schemas': 'api', 'db-anon-role': 'web_anon', 'db-pool': 10,
  'jwt-secret': process.env.JWT_SECRET ?? '', 'db-plan-enabled': true,
};
const ctx = new Context(options);
ctx.set('app.settings.x', 'y');
const pool: string | null = ctx.get('db-pool');
ctx.loadSchema();
ctx.startListener();

const identity = (req: http.IncomingMessage): Identity | null =>
  req.headers['x-user'] ? { role: 'web_user', claims: { sub: req.headers['x-user'] } } : null;
const handlerOptions: HandlerOptions = { prefix: '/api', identity, streaming: 1 << 20 };
const api: Handler = ctx.handler(handlerOptions);
http.createServer(api).listen(3000);
http.createServer(ctx.handler({ identity: async () => ({ role: null, claims: '{"sub": "x"}' }) }));
http.createServer((req, res) => {
  api(req, res, (err?: unknown) => { res.statusCode = err ? 500 : 404; res.end(); })
    .then(() => undefined);
});
http.createServer(ctx.handler({ streaming: false }));
http.createServer(ctx.handler({ streamBodyThreshold: 64 * 1024 }));
http.createServer(ctx.handler({ streamBodyThreshold: null }));

async function reload(): Promise<boolean> {
  await ctx.loadSchemaAsync();
  ctx.reloadConfig();
  ctx.reloadConfig({ 'db-schemas': 'api, other' });
  const text: string | null = ctx.metrics();
  return ctx.ready() && text !== undefined;
}
void reload();

try {
  new Context({ 'jwt-secret': 'short' });
} catch (e) {
  if (e instanceof PgrestError) {
    const name: 'PgrestError' = e.name;
    const code: string | null = e.code;
    const rest: [string, string | null, string | null, number] = [e.message, e.details, e.hint, e.status];
    console.log(name, code, rest);
  }
}
ctx.saveSchemaFile('/tmp/schema.json');
ctx.loadSchemaFile('/tmp/schema.json');
ctx.stopListener();
ctx.close();
const versions: string[] = [version, postgrestVersion, String(pool)];
console.log(versions);

// Express and Fastify, mounted as docs/bindings.md shows.

const app = express();
app.use('/api', ctx.handler());
app.use(ctx.handler({ prefix: '/api', identity: (req) => (req.headers.cookie ? { role: 'web_user' } : null) }));
const fastify = Fastify();
fastify.removeAllContentTypeParsers();
fastify.addContentTypeParser('*', (req, payload, done) => done(null));
fastify.all('/api/*', (request, reply) => { reply.hijack(); return api(request.raw, reply.raw); });
