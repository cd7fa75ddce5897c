// The library's own failures are PgrestError exceptions with PostgREST's
// fields; HTTP answers never are. Last line: a JSON report.
import { createRequire } from 'node:module';

const require = createRequire(process.cwd() + '/');
const { Context, PgrestError } = require('pgrest');
const config = JSON.parse(process.argv[2]);
const checks = [];

function expectThrow(name, fn, test) {
  try {
    fn();
    checks.push({ name, ok: false, why: 'no exception' });
  } catch (e) {
    checks.push({ name, ok: e instanceof PgrestError && test(e), message: e.message, code: e.code });
  }
}

expectThrow('short jwt-secret', () => new Context({ 'jwt-secret': 'short' }),
  (e) => /at least 32 characters/.test(e.message));
expectThrow('unknown option', () => new Context({ 'no-such-option': 'x' }), (e) => e.message.length > 0);
expectThrow('bad value by set()', () => new Context().set('db-pool', 'many'), (e) => e.message.length > 0);
expectThrow('schema load failure',
  () => new Context({ ...config, 'db-uri': 'postgresql://nobody@127.0.0.1:1/none', 'db-pool-acquisition-timeout': '1' }).loadSchema(),
  (e) => e.message.length > 0);
expectThrow('missing snapshot', () => new Context().loadSchemaFile('/nonexistent/snapshot.json'),
  (e) => e.message.length > 0);

const ctx = new Context(config);
let asyncOk = false;
try {
  await ctx.loadSchemaAsync();
  asyncOk = ctx.ready();
} catch (e) {
  asyncOk = false;
}
checks.push({ name: 'loadSchemaAsync', ok: asyncOk });
checks.push({ name: 'get()', ok: ctx.get('db-schemas') === 'api' });
ctx.close();

// What index.d.ts declares, imported as ESM: Node derives a CommonJS
// module's named exports from index.js's source, so tsc accepting the
// import does not mean Node does.
const esm = await import('pgrest');
const declared = ['Context', 'PgrestError', 'version', 'postgrestVersion'];
const missing = declared.filter((name) => esm[name] === undefined);
checks.push({ name: 'ESM named exports', ok: missing.length === 0 && esm.Context === Context, missing });

const ok = checks.every((c) => c.ok);
console.log(JSON.stringify({ ok, checks }));
