// A hand-written server for the nine scenarios of PostgREST's published
// benchmark (Chinook): the reference a user would write by hand, to compare
// pgrest-server with (bench/run.sh --peer 'node bench/peers/node/server.js').
//
// node:http + pg (npm), a pool of 20 connections, named prepared statements,
// one plain statement per request (no transaction block, no roles, no
// settings), embedded resources nested in JavaScript from one joined query.
// Bodies have the shape PostgREST gives for the same requests:
//
//   GET   /artist?select=*&artist_id=eq.N                 200 [{artist_id,name}]
//   GET   /album?select=*,track(*,genre(*))[&artist_id=eq.N]
//                                                         200 [{album…,track:[{track…,genre:{…}}]}]
//   POST  /employee[?columns=a,b,…]  object or array      201, empty body (return=minimal)
//   PATCH /actor?actor_id=eq.N  {"last_update":"now"}     204
//   GET   /rpc/add_them?a=&b=&c=&d=&e=                    200 scalar
//   GET   /rpc/ret_artists?select=*&artist_id=eq.N        200 [{artist_id,name}]
//   GET   /rpc/ret_albums?select=album_id,title,artist_id,track(*,genre(*))&artist_id=eq.N
//                                                         200 as /album
//
// Anything else is 404; a malformed request 400; a database error 400/500
// with PostgreSQL's message.
//
// Usage: node server.js [PORT [DATABASE_URL]]   (or env PORT, DATABASE_URL;
// without a URL, pg reads libpq's PGHOST/PGPORT/PGUSER/PGDATABASE). Env
// POOL (default 20), HOST (default 127.0.0.1). Install: npm ci (in this folder).
'use strict';

const http = require('node:http');
const pg = require('pg');

const PORT = Number(process.argv[2] || process.env.PORT || 3000);
const DATABASE_URL = process.argv[3] || process.env.DATABASE_URL || undefined;
const HOST = process.env.HOST || '127.0.0.1';

// numeric (unit_price) as a JSON number, as PostgreSQL's to_json writes it
pg.types.setTypeParser(1700, (v) => Number(v));

// idle connections are kept (pg closes them after 10 s by default): the
// benchmark pauses this server while it measures the others
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: Number(process.env.POOL || 20), idleTimeoutMillis: 0 });
pool.on('error', (e) => console.error('pool:', e.message));

// ------------------------------------------------------------ statements
const Q = {
  artist: { name: 'artist', text: 'SELECT artist_id, name FROM artist WHERE artist_id = $1' },
  retArtists: { name: 'ret_artists', text: 'SELECT artist_id, name FROM ret_artists() WHERE artist_id = $1' },
  addThem: { name: 'add_them', text: 'SELECT add_them($1, $2, $3, $4, $5) AS r' },
};
// album + its tracks + each track's genre, one row per track (rowMode array)
const EMBED_COLS = 'a.album_id, a.title, a.artist_id, t.track_id, t.name, t.album_id, t.media_type_id, ' +
  't.genre_id, t.composer, t.milliseconds, t.bytes, t.unit_price, g.genre_id, g.name';
function embedQuery(name, from, where) {
  return {
    name,
    text: `SELECT ${EMBED_COLS} FROM ${from} a LEFT JOIN track t ON t.album_id = a.album_id ` +
      `LEFT JOIN genre g ON g.genre_id = t.genre_id${where} ORDER BY a.album_id, t.track_id`,
    rowMode: 'array',
  };
}
Q.albumsAll = embedQuery('albums_all', 'album', '');
Q.albumsBy = embedQuery('albums_by_artist', 'album', ' WHERE a.artist_id = $1');
Q.retAlbumsBy = embedQuery('ret_albums_by_artist', 'ret_albums()', ' WHERE a.artist_id = $1');

function nestAlbums(rows) {
  const out = [];
  let cur = null;
  for (const r of rows) {
    if (cur === null || cur.album_id !== r[0]) {
      cur = { album_id: r[0], title: r[1], artist_id: r[2], track: [] };
      out.push(cur);
    }
    if (r[3] === null) continue; // album without tracks
    cur.track.push({
      track_id: r[3], name: r[4], album_id: r[5], media_type_id: r[6], genre_id: r[7],
      composer: r[8], milliseconds: r[9], bytes: r[10], unit_price: r[11],
      genre: r[12] === null ? null : { genre_id: r[12], name: r[13] },
    });
  }
  return out;
}

// writable columns, in table order (a hand-written server whitelists them)
const EMPLOYEE_COLS = ['employee_id', 'last_name', 'first_name', 'title', 'reports_to', 'birth_date',
  'hire_date', 'address', 'city', 'state', 'country', 'postal_code', 'phone', 'fax', 'email'];
const ACTOR_COLS = ['first_name', 'last_name', 'last_update'];

// named statements built per column list / row count, cached by text
const named = new Map();
function stmt(text) {
  let name = named.get(text);
  if (name === undefined) { name = 's' + named.size; named.set(text, name); }
  return name;
}

// ------------------------------------------------------------ HTTP
class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function send(res, status, body) {
  if (body === undefined) { res.writeHead(status); res.end(); return; }
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function eqInt(params, key) {
  const v = params.get(key);
  if (v === null || !v.startsWith('eq.')) throw new HttpError(400, `expected ${key}=eq.<integer>`);
  const n = Number(v.slice(3));
  if (!Number.isInteger(n)) throw new HttpError(400, `${key}: not an integer`);
  return n;
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try { resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))); } catch (e) { reject(new HttpError(400, 'invalid JSON body')); }
    });
    req.on('error', reject);
  });
}

async function insertEmployees(params, body) {
  const rows = Array.isArray(body) ? body : [body];
  if (rows.length === 0) return;
  if (rows.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) throw new HttpError(400, 'expected an object or an array of objects');
  const wanted = params.has('columns') ? params.get('columns').split(',') : Object.keys(rows[0]);
  const cols = EMPLOYEE_COLS.filter((c) => wanted.includes(c));
  if (cols.length !== wanted.length) throw new HttpError(400, 'unknown column');
  const values = [];
  const tuples = [];
  for (const r of rows) {
    tuples.push('(' + cols.map((c) => { values.push(r[c] === undefined ? null : r[c]); return '$' + values.length; }).join(', ') + ')');
  }
  const text = `INSERT INTO employee (${cols.join(', ')}) VALUES ${tuples.join(', ')}`;
  await pool.query({ name: stmt(text), text, values });
}

async function updateActor(params, body) {
  const id = eqInt(params, 'actor_id');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'expected an object');
  const cols = ACTOR_COLS.filter((c) => c in body);
  if (cols.length === 0 || cols.length !== Object.keys(body).length) throw new HttpError(400, 'unknown or no column');
  const values = cols.map((c) => body[c]);
  values.push(id);
  const text = `UPDATE actor SET ${cols.map((c, i) => `${c} = $${i + 1}`).join(', ')} WHERE actor_id = $${values.length}`;
  await pool.query({ name: stmt(text), text, values });
}

const EMBED_SELECT = '*,track(*,genre(*))';
const RPC_EMBED_SELECT = 'album_id,title,artist_id,track(*,genre(*))';

async function route(req, res) {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
  const select = params.get('select');
  if (req.method === 'GET') {
    switch (path) {
      case '/artist': {
        if (select !== null && select !== '*') break;
        const r = await pool.query({ ...Q.artist, values: [eqInt(params, 'artist_id')] });
        return send(res, 200, JSON.stringify(r.rows));
      }
      case '/album': {
        if (select !== EMBED_SELECT) break;
        const r = params.has('artist_id')
          ? await pool.query({ ...Q.albumsBy, values: [eqInt(params, 'artist_id')] })
          : await pool.query(Q.albumsAll);
        return send(res, 200, JSON.stringify(nestAlbums(r.rows)));
      }
      case '/rpc/add_them': {
        const args = ['a', 'b', 'c', 'd', 'e'].map((k) => {
          const n = Number(params.get(k));
          if (params.get(k) === null || !Number.isInteger(n)) throw new HttpError(400, `${k}: not an integer`);
          return n;
        });
        const r = await pool.query({ ...Q.addThem, values: args });
        return send(res, 200, JSON.stringify(r.rows[0].r));
      }
      case '/rpc/ret_artists': {
        if (select !== null && select !== '*') break;
        const r = await pool.query({ ...Q.retArtists, values: [eqInt(params, 'artist_id')] });
        return send(res, 200, JSON.stringify(r.rows));
      }
      case '/rpc/ret_albums': {
        if (select !== RPC_EMBED_SELECT) break;
        const r = await pool.query({ ...Q.retAlbumsBy, values: [eqInt(params, 'artist_id')] });
        return send(res, 200, JSON.stringify(nestAlbums(r.rows)));
      }
    }
  } else if (req.method === 'POST' && path === '/employee') {
    await insertEmployees(params, await readJson(req));
    return send(res, 201);
  } else if (req.method === 'PATCH' && path === '/actor') {
    await updateActor(params, await readJson(req));
    return send(res, 204);
  }
  throw new HttpError(404, `not found: ${req.method} ${path}`);
}

const server = http.createServer((req, res) => {
  route(req, res).catch((e) => {
    // pg errors carry a SQLSTATE; class 22/23 (data, constraint) are the client's
    const status = e instanceof HttpError ? e.status : (/^2[23]/.test(e.code || '') ? 400 : 500);
    if (!res.headersSent) send(res, status, JSON.stringify({ code: e.code || null, message: e.message }));
    else res.destroy();
  });
});
server.keepAliveTimeout = 60000;
server.listen(PORT, HOST, () => console.error(`bench peer (node) listening on http://${HOST}:${PORT}`));

function stop() { server.close(); pool.end().finally(() => process.exit(0)); }
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
