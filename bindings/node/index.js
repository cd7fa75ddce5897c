'use strict';
// pgrest for Node: PostgREST's API mounted in a node:http, Express or
// Fastify server, on Node's own event loop (docs/bindings.md, "Node").
const native = require('./build/Release/pgrest_node.node');
const reasonPhrase = require('./reason_phrases');

// The library's own failures (bad configuration, schema load): PostgREST's
// error fields. HTTP answers are responses, never exceptions.
class PgrestError extends Error {
  constructor(message, fields) {
    super(message);
    this.name = 'PgrestError';
    this.code = fields.code ?? null;
    this.details = fields.details ?? null;
    this.hint = fields.hint ?? null;
    this.status = fields.status ?? 0;
  }
}

function asPgrestError(e) {
  return e && e.pgrest === true ? new PgrestError(e.message, e) : e;
}

function rethrowing(fn) {
  try {
    return fn();
  } catch (e) {
    throw asPgrestError(e);
  }
}

// Node's writeHead wants repeated header names as one array. An empty
// value (the trace header of a request without it, or one response.headers
// sets) goes out as one space, as pgrest-server sends it (libmicrohttpd
// refuses empty values, server/http.c): the same bytes on the wire, and
// every reader strips it to the empty value (RFC 9110 5.5).
function headerObject(flat) {
  const out = {};
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i];
    const value = flat[i + 1] === '' ? ' ' : flat[i + 1];
    if (out[name] === undefined) out[name] = value;
    else if (Array.isArray(out[name])) out[name].push(value);
    else out[name] = [out[name], value];
  }
  return out;
}

function hasHeader(flat, wanted) {
  for (let i = 0; i < flat.length; i += 2) {
    if (flat[i].toLowerCase() === wanted) return true;
  }
  return false;
}

// 1xx, 204 and 304 answers carry no body and no Content-Length.
function bodyAllowed(status) {
  return status >= 200 && status !== 204 && status !== 304;
}

function readBody(req) {
  if (Buffer.isBuffer(req.rawBody)) return Promise.resolve(req.rawBody);
  if (req.readableEnded) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(chunks.length ? Buffer.concat(chunks) : null));
    req.on('error', reject);
  });
}

function splitUrl(url, prefix) {
  let rest = url;
  if (prefix) {
    if (rest !== prefix && !rest.startsWith(prefix + '/') && !rest.startsWith(prefix + '?')) return null;
    rest = rest.slice(prefix.length);
  }
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  return { path: path === '' ? '/' : path, query: q < 0 ? null : rest.slice(q + 1) };
}

function normalizeIdentity(identity) {
  if (identity == null) return null;
  const claims = identity.claims;
  return {
    role: identity.role ?? null,
    claims: claims == null ? null : (typeof claims === 'string' ? claims : JSON.stringify(claims)),
  };
}

class Context extends native.Context {
  constructor(options = {}) {
    try {
      super(options);
    } catch (e) {
      throw asPgrestError(e);
    }
  }

  set(key, value) { return rethrowing(() => super.set(key, String(value))); }
  loadSchema() { return rethrowing(() => super.loadSchema()); }
  loadSchemaAsync() { return super.loadSchemaAsync().catch((e) => { throw asPgrestError(e); }); }
  loadSchemaFile(path) { return rethrowing(() => super.loadSchemaFile(path)); }
  saveSchemaFile(path) { return rethrowing(() => super.saveSchemaFile(path)); }
  reloadConfig(options) { return rethrowing(() => super.reloadConfig(options)); }
  startListener() { return rethrowing(() => super.startListener()); }

  // One request on the loop. Resolves once the response is sent (or the
  // client left); never rejects for an HTTP error, which is a response.
  serve(req, res, { path, query, identity, streamThreshold, body }) {
    return new Promise((resolve) => {
      let taskId = null;
      let finished = false;
      const onHead = (status, reason, flat, whole) => {
        const headers = headerObject(flat);
        // PostgREST answers HEAD without Content-Length; node would add one.
        if (whole !== undefined && req.method !== 'HEAD' && bodyAllowed(status) &&
            !hasHeader(flat, 'content-length')) {
          headers['Content-Length'] = whole.length;
        }
        const phrase = reason ?? reasonPhrase(status);
        if (phrase !== undefined) res.writeHead(status, phrase, headers);
        else res.writeHead(status, headers);
        if (whole !== undefined) res.end(req.method === 'HEAD' ? undefined : whole);
      };
      const onData = (chunk) => res.write(chunk);
      const onEnd = (failed) => {
        finished = true;
        if (failed) res.destroy(); // mid-stream failure: the client must see it cut
        else if (!res.writableEnded) res.end();
        resolve();
      };
      res.on('drain', () => { if (taskId !== null && !finished) this._resume(taskId); });
      res.on('close', () => { if (taskId !== null && !finished) this._cancel(taskId); });
      taskId = this._start(req.method, path, query, req.rawHeaders, body,
        normalizeIdentity(identity), streamThreshold, onHead, onData, onEnd);
      if (finished) taskId = null;
    });
  }

  // handler({ prefix, identity, streaming }) -> (req, res, next?) for
  // node:http, Express (app.use) and Fastify (reply.hijack(); h(req.raw, reply.raw)).
  //   prefix:    serve only URLs under it, with it removed ('/api');
  //              others go to next() or get 404
  //   identity:  req => ({ role, claims }) | null (may be async): the
  //              host's verified identity, used instead of Authorization
  //   streaming: false buffers every response (default: stream bodies
  //              over 64 KiB as pgrest-server does)
  handler(options = {}) {
    const prefix = options.prefix ? options.prefix.replace(/\/+$/, '') : '';
    const streamThreshold = options.streaming === false ? -1
      : (typeof options.streaming === 'number' ? options.streaming : 0);
    return async (req, res, next) => {
      const target = splitUrl(req.url, prefix);
      if (target === null) {
        if (typeof next === 'function') return next();
        res.writeHead(404).end();
        return undefined;
      }
      try {
        const body = await readBody(req);
        const identity = options.identity ? await options.identity(req) : undefined;
        await this.serve(req, res, { ...target, identity, streamThreshold, body });
      } catch (e) {
        if (typeof next === 'function') return next(e);
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      }
      return undefined;
    };
  }
}

// Plain names only: Node finds a CommonJS module's named exports for ESM
// `import { version } from 'pgrest'` (as index.d.ts declares them) by
// scanning this line, and it does not follow `version: native.version`.
const { version, postgrestVersion } = native;
module.exports = { Context, PgrestError, version, postgrestVersion };
