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

// A body to feed to the task as it arrives: one the framework has not read
// (no rawBody, the stream not consumed) and that the headers announce.
function bodyFollows(req) {
  if (Buffer.isBuffer(req.rawBody) || req.readableEnded) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined ||
    (length !== undefined && length !== '0');
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
  //
  // follows: the body is read from req as it arrives and fed to the task
  // (instead of body); a bulk POST past streamBodyThreshold bytes (0: the
  // library's 1 MiB, -1: never) then streams into PostgreSQL. Backpressure:
  // a chunk the task cannot take yet pauses req until it can.
  serve(req, res, { path, query, identity, streamThreshold, body, follows = false,
    streamBodyThreshold = 0 }) {
    return new Promise((resolve) => {
      let taskId = null;
      let finished = false;
      let waiting = null; // a chunk the task did not take yet (backpressure)
      let endWaiting = false; // the same for the body's end
      let reqEnded = false;
      let bodyDone = !follows;
      // answered before the body's end (a bad row, 413, a bad token): the
      // rest is read and dropped, so that the client gets the answer
      const stopFeeding = () => {
        bodyDone = true;
        waiting = null;
        if (!reqEnded) req.resume();
      };
      const endBody = () => {
        const rc = this._endBody(taskId);
        if (rc === 1) endWaiting = true;
        else bodyDone = true;
      };
      const write = (chunk) => {
        const rc = this._writeBody(taskId, chunk);
        if (rc === 1) {
          waiting = chunk;
          req.pause();
        } else if (rc < 0) stopFeeding();
      };
      const onBodyWanted = () => {
        if (bodyDone || finished) return;
        if (waiting !== null) {
          const chunk = waiting;
          waiting = null;
          write(chunk);
          if (waiting === null && !bodyDone) {
            if (reqEnded) endBody();
            else req.resume();
          }
        } else if (endWaiting) {
          endWaiting = false;
          endBody();
        }
      };
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
        if (!bodyDone) stopFeeding();
        if (failed) res.destroy(); // mid-stream failure: the client must see it cut
        else if (!res.writableEnded) res.end();
        resolve();
      };
      res.on('drain', () => { if (taskId !== null && !finished) this._resume(taskId); });
      res.on('close', () => { if (taskId !== null && !finished) this._cancel(taskId); });
      taskId = this._start(req.method, path, query, req.rawHeaders, follows ? undefined : body,
        normalizeIdentity(identity), streamThreshold, onHead, onData, onEnd,
        follows, streamBodyThreshold, onBodyWanted);
      if (finished) {
        taskId = null;
        return;
      }
      if (follows) {
        req.on('data', (chunk) => {
          if (!bodyDone && !finished) write(chunk);
        });
        req.on('end', () => {
          reqEnded = true;
          if (!bodyDone && !finished && waiting === null && !endWaiting) endBody();
        });
        // a client gone mid-body: res 'close' cancels the task
        req.on('error', () => { if (taskId !== null && !finished) this._cancel(taskId); });
      }
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
  //   streamBodyThreshold: request bodies go to the library as they arrive;
  //              a bulk POST of rows whose body passes this many bytes is
  //              written to PostgreSQL while it comes (docs/bulk-import.md).
  //              0 (default): the library's 1 MiB; null or false: never
  handler(options = {}) {
    const prefix = options.prefix ? options.prefix.replace(/\/+$/, '') : '';
    const streamThreshold = options.streaming === false ? -1
      : (typeof options.streaming === 'number' ? options.streaming : 0);
    const sbt = options.streamBodyThreshold;
    const streamBodyThreshold = sbt === null || sbt === false ? -1
      : (typeof sbt === 'number' ? sbt : 0);
    return async (req, res, next) => {
      const target = splitUrl(req.url, prefix);
      if (target === null) {
        if (typeof next === 'function') return next();
        res.writeHead(404).end();
        return undefined;
      }
      try {
        const follows = bodyFollows(req);
        const body = follows ? undefined : await readBody(req);
        const identity = options.identity ? await options.identity(req) : undefined;
        await this.serve(req, res, { ...target, identity, streamThreshold, body, follows,
          streamBodyThreshold });
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
