// postgrest-js (Supabase's PostgREST client) against pgrest-server on
// tests/fixtures/test_schema.sql. Expected values are PostgREST's answers
// (its docs and source: Error.hs, Response.hs, Plan.hs), which the client
// turns into { data, error, count, status }.
// Usage: node postgrest_js.test.mjs BASE_URL JWT_SECRET
// Prints "ok - name" / "not ok - name: reason" per case and ends with
// "client: P passed, F failed, 0 skipped".
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { PostgrestClient, PostgrestError } from '@supabase/postgrest-js'

const [base, secret] = process.argv.slice(2)
const b64 = (s) => Buffer.from(s).toString('base64url')
function jwt(claims) {
  const head = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))
  const body = b64(JSON.stringify(claims))
  const sig = crypto.createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${sig}`
}
// retries off: a 503 must show, not be retried away
const anon = new PostgrestClient(base, { retry: false })
const user = new PostgrestClient(base, {
  retry: false,
  headers: { Authorization: `Bearer ${jwt({ role: 'web_user', sub: 'alice' })}` },
})

const cases = []
const test = (name, fn) => cases.push([name, fn])
const ok = (r, status = 200) => {
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(r.status, status)
  return r.data
}
const failed = (r, status, code, message) => {
  assert.equal(r.status, status, JSON.stringify(r))
  assert.equal(r.error.code, code)
  if (message !== undefined) assert.equal(r.error.message, message)
  assert.equal(r.data, null)
  return r.error
}

// ---- select
test('select with nested embeds and a filter', async () => {
  const d = ok(await anon.from('artists').select('name, albums(title, tracks(title))').eq('id', 1))
  assert.deepEqual(d, [{ name: 'The Quiet Ones', albums: [
    { title: 'First Light', tracks: [{ title: 'Dawn' }, { title: 'Noon' }] },
    { title: 'Second Wind', tracks: [{ title: 'Gust' }] }] }])
})
test('gt/lte, descending order and range', async () => {
  const d = ok(await anon.from('albums').select('id,title').gt('id', 1).lte('id', 4)
    .order('title', { ascending: false }).range(0, 1))
  assert.deepEqual(d, [{ id: 2, title: 'Second Wind' }, { id: 4, title: 'Preludes' }])
})
test('order with nullsFirst', async () => {
  const d = ok(await anon.from('albums').select('id').order('released', { nullsFirst: true }))
  assert.deepEqual(d.map((r) => r.id), [4, 3, 1, 2])
})
test('count=exact with head', async () => {
  const r = await anon.from('albums').select('*', { count: 'exact', head: true })
  assert.equal(ok(r), null)
  assert.equal(r.count, 4)
})
test('count=exact with a limit is a partial answer', async () => {
  const r = await anon.from('albums').select('id', { count: 'exact' }).order('id').limit(2)
  assert.deepEqual(ok(r, 206), [{ id: 1 }, { id: 2 }])
  assert.equal(r.count, 4)
})
test('count=planned and count=estimated give a number', async () => {
  for (const count of ['planned', 'estimated']) {
    const r = await anon.from('albums').select('id', { count }).limit(1)
    assert.ok([200, 206].includes(r.status), String(r.status))
    assert.equal(typeof r.count, 'number')
  }
})
test('csv', async () => {
  const d = ok(await anon.from('artists').select('id,name').order('id').csv())
  assert.equal(d, 'id,name\n1,"The Quiet Ones"\n2,"Blue Note Trio"\n3,"Solo Pianist"')
})
test('single', async () => {
  assert.deepEqual(ok(await anon.from('artists').select('name').eq('id', 2).single()),
    { name: 'Blue Note Trio' })
})
test('single on many rows is PGRST116', async () => {
  const e = failed(await anon.from('artists').select('name').single(), 406, 'PGRST116',
    'Cannot coerce the result to a single JSON object')
  assert.equal(e.details, 'The result contains 3 rows')
})
test('single on no row is PGRST116', async () => {
  const e = failed(await anon.from('artists').select('name').eq('id', 99).single(), 406, 'PGRST116')
  assert.equal(e.details, 'The result contains 0 rows')
})
test('maybeSingle', async () => {
  assert.equal(ok(await anon.from('artists').select('name').eq('id', 99).maybeSingle()), null)
  assert.deepEqual(ok(await anon.from('artists').select('name').eq('id', 3).maybeSingle()),
    { name: 'Solo Pianist' })
  failed(await anon.from('artists').select('name').maybeSingle(), 406, 'PGRST116')
})
test('explain (text and json, analyze)', async () => {
  const t = ok(await anon.from('artists').select('name').explain())
  assert.match(t, /Aggregate/)
  const j = ok(await anon.from('artists').select('name').explain({ analyze: true, format: 'json' }))
  assert.equal(j[0].Plan['Node Type'], 'Aggregate')
  assert.ok('Actual Rows' in j[0].Plan)
})
test('stripNulls', async () => {
  assert.deepEqual(ok(await anon.from('albums').select('id, released').eq('id', 4).stripNulls()),
    [{ id: 4 }])
})
test('JSON path and a domain with a JSON representation', async () => {
  assert.deepEqual(ok(await anon.from('albums').select('id, cover, tags->0').eq('id', 1)),
    [{ id: 1, cover: { hex: '#ff0000' }, tags: 'debut' }])
})

// ---- filters
const ids = async (q) => ok(await q).map((r) => r.id)
test('or, and or on an embedded resource', async () => {
  assert.deepEqual(await ids(anon.from('artists').select('id').or('id.eq.1,name.eq.Solo Pianist').order('id')), [1, 3])
  const d = ok(await anon.from('artists').select('id, albums!inner(title)')
    .or('title.eq.Late Set', { referencedTable: 'albums' }))
  assert.deepEqual(d, [{ id: 2, albums: [{ title: 'Late Set' }] }])
})
test('not', async () => {
  assert.deepEqual(await ids(anon.from('artists').select('id').not('country', 'eq', 'GB').order('id')), [2, 3])
  assert.deepEqual(await ids(anon.from('artists').select('id').not('id', 'in', '(1,2)')), [3])
})
test('in with values needing quotes', async () => {
  assert.deepEqual(await ids(anon.from('artists').select('id')
    .in('name', ['Solo Pianist', 'Blue Note Trio', 'a,b "c"']).order('id')), [2, 3])
})
test('match', async () => {
  assert.deepEqual(await ids(anon.from('artists').select('id').match({ country: 'US', genre: 'jazz' })), [2])
})
test('contains, containedBy, overlaps on arrays', async () => {
  assert.deepEqual(await ids(anon.from('albums').select('id').contains('tags', ['live'])), [1])
  assert.deepEqual(await ids(anon.from('albums').select('id').containedBy('tags', ['debut', 'live', 'x']).order('id')), [1, 2])
  assert.deepEqual(await ids(anon.from('albums').select('id').overlaps('tags', ['jazz', 'live']).order('id')), [1, 3])
})
test('textSearch: tsquery, plain, phrase, websearch', async () => {
  const titles = async (q) => ok(await q).map((r) => r.title)
  const t = () => anon.from('tracks').select('title').order('id')
  assert.deepEqual(await titles(t().textSearch('title', "'dawn' | 'noon'")), ['Dawn', 'Noon'])
  assert.deepEqual(await titles(t().textSearch('title', 'dawn', { type: 'plain' })), ['Dawn'])
  assert.deepEqual(await titles(t().textSearch('title', 'prelude c', { type: 'phrase', config: 'english' })), [])
  assert.deepEqual(await titles(t().textSearch('title', 'dawn or noon', { type: 'websearch', config: 'english' })), ['Dawn', 'Noon'])
})
test('like, ilike, likeAnyOf, regex, is null, isDistinct, filter', async () => {
  assert.deepEqual(await ids(anon.from('artists').select('id').ilike('name', '%trio%')), [2])
  assert.deepEqual(await ids(anon.from('artists').select('id').like('name', 'The%')), [1])
  assert.deepEqual(await ids(anon.from('artists').select('id').likeAnyOf('name', ['%Trio', 'Solo%']).order('id')), [2, 3])
  assert.deepEqual(await ids(anon.from('artists').select('id').regexIMatch('name', '^s')), [3])
  assert.deepEqual(await ids(anon.from('albums').select('id').is('released', null)), [4])
  assert.deepEqual(await ids(anon.from('albums').select('id').isDistinct('rating', 5).order('id')), [1, 2, 4])
  assert.deepEqual(await ids(anon.from('albums').select('id').filter('tags', 'cs', '{jazz}')), [3])
})
test('order, limit and range on an embedded resource', async () => {
  const q = () => anon.from('artists').select('name, albums(title)').eq('id', 1)
  assert.deepEqual(ok(await q().order('title', { referencedTable: 'albums', ascending: false })
    .limit(1, { referencedTable: 'albums' })), [{ name: 'The Quiet Ones', albums: [{ title: 'Second Wind' }] }])
  assert.deepEqual(ok(await q().order('id', { referencedTable: 'albums' }).range(1, 1, { referencedTable: 'albums' })),
    [{ name: 'The Quiet Ones', albums: [{ title: 'Second Wind' }] }])
})

// ---- rpc
test('rpc with POST and GET', async () => {
  assert.equal(ok(await anon.rpc('add', { a: 1, b: 2 })), 3)
  assert.equal(ok(await anon.rpc('add', { a: 1, b: 2 }, { get: true })), 3)
  assert.equal(ok(await anon.rpc('add', { a: 4 }, { get: true })), 5)
})
test('rpc head with count', async () => {
  const r = await anon.rpc('album_tracks', { album: 1 }, { head: true, count: 'exact' })
  assert.equal(ok(r), null)
  assert.equal(r.count, 2)
})
test('rpc returning a set: filters, order, select, single', async () => {
  const r = await anon.rpc('album_tracks', { album: 1 }, { count: 'exact' }).select('title').gt('seconds', 200)
  assert.deepEqual(ok(r), [{ title: 'Dawn' }, { title: 'Noon' }])
  assert.equal(r.count, 2)
  assert.deepEqual(ok(await anon.rpc('album_tracks', { album: 1 }, { get: true }).select('title')
    .order('position', { ascending: false })), [{ title: 'Noon' }, { title: 'Dawn' }])
  assert.equal(ok(await anon.rpc('album_tracks', { album: 1 }).eq('position', 2).single()).title, 'Noon')
})
test('rpc: json argument, composite results, unknown function', async () => {
  assert.deepEqual(ok(await anon.rpc('echo_json', { doc: { a: [1, 2] } })), { a: [1, 2] })
  assert.deepEqual(ok(await anon.rpc('boxes').eq('id', 2)), [{ id: 2, size: { w: 3, h: 4 } }])
  const e = failed(await anon.rpc('nope', { x: 1 }), 404, 'PGRST202',
    'Could not find the function api.nope(x) in the schema cache')
  assert.equal(e.details, 'Searched for the function api.nope with parameter x or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.')
})

// ---- writes (the JWT's role web_user may write)
test('insert returning the row', async () => {
  const d = ok(await user.from('playlists').insert({ name: 'Night' }).select('name, owner'), 201)
  assert.deepEqual(d, [{ name: 'Night', owner: 'web_user' }])
})
test('bulk insert: missing keys are NULL, or the default with defaultToNull false', async () => {
  const rows = [{ holder: 'a' }, { holder: 'b', number: 3 }]
  assert.deepEqual(ok(await user.from('tickets').insert(rows).select(), 201),
    [{ number: null, holder: 'a' }, { number: 3, holder: 'b' }])
  assert.deepEqual(ok(await user.from('tickets').insert(rows, { defaultToNull: false }).select(), 201),
    [{ number: 7, holder: 'a' }, { number: 3, holder: 'b' }])
})
test('insert with count and no representation', async () => {
  const r = await user.from('playlists').insert([{ name: 'x' }, { name: 'y' }], { count: 'exact' })
  assert.equal(ok(r, 201), null)
  assert.equal(r.count, 2)
})
test('insert violating a constraint', async () => {
  failed(await user.from('artists').insert({ id: 1, name: 'dup' }), 409, '23505',
    'duplicate key value violates unique constraint "artists_pkey"')
  failed(await user.from('albums').insert({ artist_id: 999, title: 't' }), 409, '23503')
  failed(await user.from('artists').insert({ name: null }), 400, '23502')
})
test('upsert: merge, onConflict, ignoreDuplicates', async () => {
  assert.deepEqual(ok(await user.from('artists').upsert({ id: 1, name: 'The Quiet Ones', country: 'GB', formed: 1991 }).select('id, name')),
    [{ id: 1, name: 'The Quiet Ones' }])
  assert.deepEqual(ok(await user.from('tracks').upsert({ album_id: 1, position: 1, title: 'Dawn', seconds: 201 },
    { onConflict: 'album_id,position' }).select('title')), [{ title: 'Dawn' }])
  assert.deepEqual(ok(await user.from('artists').upsert({ id: 1, name: 'ignored' }, { ignoreDuplicates: true }).select(), 201), [])
  const d = ok(await user.from('artists').upsert([{ id: 2, name: 'Blue Note Trio' }, { id: 50, name: 'New' }],
    { defaultToNull: false }).select('id, genre, formed').order('id'), 201)
  assert.deepEqual(d, [{ id: 2, genre: 'jazz', formed: 1958 }, { id: 50, genre: 'rock', formed: null }])
})
test('update', async () => {
  assert.deepEqual(ok(await user.from('artists').update({ formed: 1992 }).eq('id', 1).select('id,formed')),
    [{ id: 1, formed: 1992 }])
  const r = await user.from('artists').update({ formed: 1991 }, { count: 'exact' }).eq('id', 1)
  assert.equal(ok(r, 204), null)
  assert.equal(r.count, 1)
})
test('delete', async () => {
  assert.deepEqual(ok(await user.from('playlists').delete().eq('name', 'x').select('name')), [{ name: 'x' }])
  const r = await user.from('playlists').delete({ count: 'exact' }).in('name', ['y', 'Night'])
  assert.equal(ok(r, 204), null)
  assert.equal(r.count, 2)
})
test('maxAffected', async () => {
  failed(await user.from('artists').update({ formed: 1 }).gt('id', 0).maxAffected(1), 400, 'PGRST124',
    'Query result exceeds max-affected preference constraint')
  assert.equal(ok(await anon.from('artists').select('formed').eq('id', 1).single()).formed, 1991)
})
test('rollback', async () => {
  assert.deepEqual(ok(await user.from('playlists').insert({ name: 'rb' }).select('name').rollback(), 201), [{ name: 'rb' }])
  assert.deepEqual(ok(await anon.from('playlists').select('id').eq('name', 'rb')), [])
})
test('permissions and row level security', async () => {
  failed(await anon.from('artists').insert({ name: 'anon' }), 401, '42501',
    'permission denied for table artists')
  assert.deepEqual(ok(await user.from('private_notes').select('body').order('id')),
    [{ body: 'alice 1' }, { body: 'alice 2' }])
  assert.deepEqual(ok(await anon.from('private_notes').select('body')), [])
})

// ---- errors, schema, cancellation
test('throwOnError throws a PostgrestError', async () => {
  await assert.rejects(async () => { await anon.from('nope').select().throwOnError() }, (e) => {
    assert.ok(e instanceof PostgrestError)
    assert.equal(e.code, 'PGRST205')
    assert.equal(e.message, "Could not find the table 'api.nope' in the schema cache")
    return true
  })
})
test('unknown column', async () => {
  failed(await anon.from('tracks').select('nope'), 400, '42703', 'column tracks.nope does not exist')
})
test('schema() with a schema that is not exposed', async () => {
  const e = failed(await anon.schema('private').from('labels').select(), 406, 'PGRST106', 'Invalid schema: private')
  assert.equal(e.hint, 'Only the following schemas are exposed: api')
  assert.deepEqual(ok(await anon.schema('api').from('labels').select('name')), [{ name: 'Indie Co' }])
})
test('abortSignal cancels, the server goes on', async () => {
  const c = new AbortController()
  const q = anon.rpc('slow', { seconds: 2 }).abortSignal(c.signal)
  setTimeout(() => c.abort(), 200)
  const r = await q
  assert.equal(r.status, 0)
  assert.match(r.error.message, /AbortError/)
  assert.equal(ok(await anon.rpc('add', { a: 2, b: 2 })), 4)
})

let passed = 0, failures = 0
for (const [name, fn] of cases) {
  try {
    await fn()
    passed++
    console.log(`ok - ${name}`)
  } catch (e) {
    failures++
    console.log(`not ok - ${name}: ${(e && e.message ? e.message : String(e)).split('\n').slice(0, 6).join(' | ')}`)
  }
}
console.log(`client: ${passed} passed, ${failures} failed, 0 skipped`)
process.exit(failures ? 1 : 0)
