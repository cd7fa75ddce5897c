// supabase-js's PostgREST-facing parts (from, rpc, schema; db.schema and
// accessToken options) against pgrest-server. supabase-js wraps
// postgrest-js with its own fetch, which adds apikey, Authorization
// (Bearer of the access token, else of the key) and X-Client-Info, and
// sends Accept-Profile / Content-Profile of its db.schema ("public" unless
// set). It talks to SUPABASE_URL/rest/v1: the fetch below maps that path
// onto the server, as Supabase's gateway does.
// Usage: node supabase_js.test.mjs BASE_URL JWT_SECRET (helpers.mjs).
import assert from 'node:assert/strict'
import { createClient } from '@supabase/supabase-js'
import { base, failed, jwt, ok, run, test } from './helpers.mjs'

let sent
const gateway = async (url, init) => {
  const u = new URL(url.toString())
  if (!u.pathname.startsWith('/rest/v1/')) throw new Error(`not a REST path: ${u.pathname}`)
  sent = Object.fromEntries(new Headers(init.headers))
  return fetch(base + u.pathname.slice('/rest/v1'.length) + u.search, init)
}
// Node 20 has no WebSocket: realtime-js wants a transport, never used here
const options = (more) => ({ global: { fetch: gateway }, realtime: { transport: class {} },
  auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false }, ...more })
const anonKey = jwt({ role: 'web_anon' })
const supabase = createClient('http://supabase.test', anonKey, options({ db: { schema: 'api' } }))

test('supabase-js: from() with the anon key, the headers it adds', async () => {
  assert.deepEqual(ok(await supabase.from('artists').select('id, name').eq('id', 1)), [{ id: 1, name: 'The Quiet Ones' }])
  assert.equal(sent.apikey, anonKey)
  assert.equal(sent.authorization, `Bearer ${anonKey}`)
  assert.equal(sent['accept-profile'], 'api')
  assert.match(sent['x-client-info'], /^supabase-js\//)
})
test('supabase-js: rpc by POST and GET, count', async () => {
  assert.equal(ok(await supabase.rpc('add', { a: 1, b: 2 })), 3)
  assert.equal(sent['content-profile'], 'api')
  const r = await supabase.rpc('album_tracks', { album: 1 }, { get: true, count: 'exact' }).select('title')
  assert.deepEqual(ok(r), [{ title: 'Dawn' }, { title: 'Noon' }])
  assert.equal(r.count, 2)
})
test('supabase-js: schema() and the default db.schema "public" (not exposed here)', async () => {
  assert.deepEqual(ok(await supabase.schema('personal').from('members').select('username').order('username')),
    [{ username: 'kiwicopple' }, { username: 'supabot' }])
  const dflt = createClient('http://supabase.test', anonKey, options())
  const e = failed(await dflt.from('artists').select(), 406, 'PGRST106', 'Invalid schema: public')
  assert.equal(e.hint, 'Only the following schemas are exposed: api, personal')
})
test('supabase-js: an accessToken callback is the Authorization (row level security)', async () => {
  const alice = createClient('http://supabase.test', anonKey,
    options({ db: { schema: 'api' }, accessToken: async () => jwt({ role: 'web_user', sub: 'alice' }) }))
  assert.deepEqual(ok(await alice.from('private_notes').select('body').order('id')), [{ body: 'alice 1' }, { body: 'alice 2' }])
  assert.equal(sent.apikey, anonKey)
  assert.deepEqual(ok(await supabase.from('private_notes').select('body')), [])
  const w = await alice.from('playlists').insert({ name: 'sb' }).select('name, owner').single().rollback()
  assert.deepEqual(ok(w, 201), { name: 'sb', owner: 'web_user' })
})
test('supabase-js: a key that is not a JWT is refused, as by PostgREST', async () => {
  const publishable = createClient('http://supabase.test', 'sb_publishable_abc', options({ db: { schema: 'api' } }))
  failed(await publishable.from('artists').select(), 401, 'PGRST301', 'Expected 3 parts in JWT; got 1')
})

await run()
