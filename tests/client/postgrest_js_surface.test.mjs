// postgrest-js's whole surface on the chat of tests/client/client_schema.sql
// (channels, messages, members, ...), the second schema "personal", and the
// RAISE functions. Runs after postgrest_js.test.mjs on the same database.
// Expected values are PostgREST's answers, from its source (cited per case)
// and from what the client makes of them (postgrest-js's processResponse:
// data from the body, count from Content-Range, error from a non-2xx body).
// Usage: node postgrest_js_surface.test.mjs BASE_URL JWT_SECRET (helpers.mjs).
import assert from 'node:assert/strict'
import { PostgrestClient } from '@supabase/postgrest-js'
import { anon, base, failed, jwt, ok, run, test, user } from './helpers.mjs'

// The request postgrest-js sent last (URL decoded) and the response headers.
let sent
const recording = async (url, init) => {
  const res = await fetch(url, init)
  const headers = {}
  res.headers.forEach((v, k) => { headers[k] = v })
  sent = { url: decodeURIComponent(url.toString().slice(base.length)), method: init.method,
    request: init.headers, headers }
  return res
}
const rec = new PostgrestClient(base, { retry: false, fetch: recording })
const recUser = new PostgrestClient(base, { retry: false, fetch: recording,
  headers: { Authorization: `Bearer ${jwt({ role: 'web_user' })}` } })

// ---- embedding (Plan.hs addRels / findRel; QueryBuilder.hs getJoinSelects)
test('embeds: many-to-one, one-to-many, one-to-one both ways, nested', async () => {
  assert.deepEqual(ok(await anon.from('messages').select('id, members(username), channels(slug, channel_details(details))').in('id', [1, 2]).order('id')), [
    { id: 1, members: { username: 'supabot' }, channels: { slug: 'public', channel_details: { details: 'Details for public channel' } } },
    { id: 2, members: { username: 'supabot' }, channels: { slug: 'random', channel_details: null } }])
  assert.deepEqual(ok(await anon.from('channel_details').select('details, channels(slug)')),
    [{ details: 'Details for public channel', channels: { slug: 'public' } }])
  assert.deepEqual(ok(await anon.from('channels').select('slug, messages(id)').order('id').order('id', { referencedTable: 'messages' })),
    [{ slug: 'public', messages: [{ id: 1 }, { id: 4 }] }, { slug: 'random', messages: [{ id: 2 }, { id: 3 }] }])
})
test('embeds: a to-one embed is row_to_json(...)::jsonb, keys in jsonb order', async () => {
  // QueryBuilder.hs: "row_to_json(" <> aggAlias <> ".*)::jsonb": jsonb sorts
  // keys by length, then bytes; JSON.parse keeps the order it reads
  const d = ok(await anon.from('messages').select('id, members(username, status)').eq('id', 1))
  assert.deepEqual(Object.keys(d[0].members), ['status', 'username'])
})
test('embeds: ambiguous (PGRST201), hints by column and by constraint, aliases', async () => {
  const e = failed(await anon.from('best_friends').select('*, members(*)'), 300, 'PGRST201',
    "Could not embed because more than one relationship was found for 'best_friends' and 'members'")
  assert.equal(e.details.length, 3)
  assert.equal(e.hint, "Try changing 'members' to one of the following: 'members!best_friends_first_user_fkey', " +
    "'members!best_friends_second_user_fkey', 'members!best_friends_third_wheel_fkey'. Find the desired relationship in the 'details' key.")
  assert.deepEqual(ok(await anon.from('best_friends').select('first:members!first_user(username), second:members!second_user(username), third:members!third_wheel(username)').order('id')), [
    { first: { username: 'supabot' }, second: { username: 'kiwicopple' }, third: { username: 'awailas' } },
    { first: { username: 'supabot' }, second: { username: 'dragarcia' }, third: null }])
  assert.deepEqual(ok(await anon.from('best_friends').select('id, members!best_friends_second_user_fkey(username)').order('id')),
    [{ id: 1, members: { username: 'kiwicopple' } }, { id: 2, members: { username: 'dragarcia' } }])
  assert.deepEqual(ok(await anon.from('members').select('username, best_friends!first_user(id)').eq('username', 'supabot').order('id', { referencedTable: 'best_friends' })),
    [{ username: 'supabot', best_friends: [{ id: 1 }, { id: 2 }] }])
  const n = failed(await anon.from('members').select('username, channels(slug)'), 400, 'PGRST200',
    "Could not find a relationship between 'members' and 'channels' in the schema cache")
  assert.equal(n.hint, null)
})
test('embeds: self reference, many-to-many, !inner and !left', async () => {
  assert.deepEqual(ok(await anon.from('collections').select('description, parent:parent_id(description), children:collections!parent_id(description)').order('id')), [
    { description: 'Root', parent: null, children: [{ description: 'Child' }] },
    { description: 'Child', parent: { description: 'Root' }, children: [{ description: 'Grandchild' }] },
    { description: 'Grandchild', parent: { description: 'Child' }, children: [] }])
  assert.deepEqual(ok(await anon.from('products').select('name, categories(name)').order('id').order('name', { referencedTable: 'categories' })), [
    { name: 'Laptop', categories: [{ name: 'Electronics' }] },
    { name: 'Phone', categories: [{ name: 'Electronics' }, { name: 'Portable' }] },
    { name: 'Tablet', categories: [{ name: 'Portable' }] }])
  assert.deepEqual(ok(await anon.from('products').select('name, categories!inner(name)').eq('categories.name', 'Portable').order('id')),
    [{ name: 'Phone', categories: [{ name: 'Portable' }] }, { name: 'Tablet', categories: [{ name: 'Portable' }] }])
  // !left is the default join: an embedded filter empties the embed, the row stays
  assert.deepEqual(ok(await anon.from('channels').select('slug, channel_details!left(details)').order('id')),
    [{ slug: 'public', channel_details: { details: 'Details for public channel' } }, { slug: 'random', channel_details: null }])
  assert.deepEqual(ok(await anon.from('messages').select('id, channels(slug)').eq('channels.slug', 'public').in('id', [1, 2]).order('id')),
    [{ id: 1, channels: { slug: 'public' } }, { id: 2, channels: null }])
})
test('embeds: null filters on an embed (anti-join), nested filter, order, limit and or', async () => {
  // Plan.hs addNullEmbedFilters: ?embed=is.null / not.is.null test the join
  assert.deepEqual(ok(await anon.from('channels').select('slug, channel_details(id)').is('channel_details', null)),
    [{ slug: 'random', channel_details: null }])
  assert.deepEqual(ok(await anon.from('channels').select('slug, channel_details(id)').not('channel_details', 'is', null)),
    [{ slug: 'public', channel_details: { id: 1 } }])
  const c = () => anon.from('channels').select('slug, messages(id, members(username))').eq('id', 1)
  assert.deepEqual(ok(await c().eq('messages.members.username', 'kiwicopple').order('id', { referencedTable: 'messages' })),
    [{ slug: 'public', messages: [{ id: 1, members: null }, { id: 4, members: { username: 'kiwicopple' } }] }])
  assert.deepEqual(ok(await c().order('id', { referencedTable: 'messages', ascending: false }).limit(1, { referencedTable: 'messages' })),
    [{ slug: 'public', messages: [{ id: 4, members: { username: 'kiwicopple' } }] }])
  assert.deepEqual(ok(await anon.from('members').select('username, messages(id, channels(slug, messages(id)))').eq('username', 'kiwicopple')
    .order('id', { referencedTable: 'messages.channels.messages', ascending: false })),
  [{ username: 'kiwicopple', messages: [{ id: 4, channels: { slug: 'public', messages: [{ id: 4 }, { id: 1 }] } }] }])
  assert.deepEqual(ok(await anon.from('channels').select('slug, messages(id)').or('id.eq.1,id.eq.3', { referencedTable: 'messages' }).order('id')),
    [{ slug: 'public', messages: [{ id: 1 }] }, { slug: 'random', messages: [{ id: 3 }] }])
})
test('embeds: order by a to-one embed, PGRST118 for a to-many one, PGRST108 for one not selected', async () => {
  assert.deepEqual(ok(await anon.from('messages').select('id, channels(slug)').order('channels(slug)', { ascending: false }).order('id')).map((r) => r.id),
    [2, 3, 1, 4])
  const m = failed(await anon.from('channels').select('id, messages(id)').order('messages(id)'), 400, 'PGRST118',
    "A related order on 'messages' is not possible")
  assert.equal(m.details, "'channels' and 'messages' do not form a many-to-one or one-to-one relationship")
  const n = failed(await anon.from('messages').select('id').eq('channels.slug', 'public'), 400, 'PGRST108',
    "'channels' is not an embedded resource in this request")
  assert.equal(n.hint, "Verify that 'channels' is included in the 'select' query parameter.")
  failed(await anon.from('messages').select('id').limit(1, { referencedTable: 'nope' }), 400, 'PGRST108')
})
test('spreads: to-one (nested, aliased), to-many (arrays); aggregates refused in a to-many spread', async () => {
  assert.deepEqual(ok(await anon.from('messages').select('id, ...channels(slug, ...channel_details(details))').in('id', [1, 2]).order('id')),
    [{ id: 1, slug: 'public', details: 'Details for public channel' }, { id: 2, slug: 'random', details: null }])
  assert.deepEqual(ok(await anon.from('messages').select('id, ...members(name:username)').eq('id', 4)), [{ id: 4, name: 'kiwicopple' }])
  assert.deepEqual(ok(await anon.from('channels').select('slug, ...messages(id)').eq('id', 2).order('id', { referencedTable: 'messages' })),
    [{ slug: 'random', id: [2, 3] }])
  const e = failed(await anon.from('albums').select('title, ...tracks(seconds.sum())'), 400, 'PGRST127', 'Feature not implemented')
  assert.equal(e.details, 'Aggregates are not implemented for one-to-many or many-to-many spreads.')
})
test('JSON paths in embeds: quoted keys, negative indexes, an index before ")" is a key', async () => {
  // a row of its own for the reads below, deleted at the end
  ok(await user.from('messages').insert({ message: 'json', username: 'awailas', channel_id: 1,
    data: { 'key with space': 1, arr: [10, 20, 30], n: { 'a.b': 2 } } }), 201)
  try {
    assert.deepEqual(ok(await anon.from('messages').select('k:data->>"key with space", last:data->arr->-1, ab:data->n->>"a.b", v:data->arr->0::int').eq('message', 'json')),
      [{ k: '1', last: 30, ab: '2', v: 10 }])
    assert.deepEqual(ok(await anon.from('messages').select('message').gt('data->arr->1', 15)), [{ message: 'json' }])
    // QueryParams.hs pJIdx: an index ends at ->, ::, '.', ',' or the end of
    // the input, not at ')': "1)" is the key "1" (to_jsonb(..)->'1', named
    // after the key), "1," an index (named after the last key, Plan.hs lastJsonKey)
    const c = () => anon.from('channels').select('id').eq('id', 1).eq('messages.message', 'json')
    assert.deepEqual(ok(await c().select('id, messages(data->arr->1)')), [{ id: 1, messages: [{ 1: null }] }])
    assert.deepEqual(ok(await c().select('id, messages(data->arr->1, message)')), [{ id: 1, messages: [{ arr: 20, message: 'json' }] }])
    // a domain's representation applies to the path's result (Plan.hs
    // withTransformer): colour_to_json(to_jsonb(cover)->>'hex')
    assert.deepEqual(ok(await anon.from('albums').select('cover->>hex').eq('id', 1)), [{ hex: { hex: null } }])
  } finally {
    ok(await user.from('messages').delete().eq('message', 'json'), 204)
  }
})
test('computed fields and computed relationships', async () => {
  assert.deepEqual(ok(await anon.from('messages').select('id, blurb').lt('id', 3).order('id')), [{ id: 1, blurb: 'Hel' }, { id: 2, blurb: 'Per' }])
  assert.deepEqual(ok(await anon.from('messages').select('id').eq('blurb', 'Kia')), [{ id: 4 }])
  assert.deepEqual(ok(await anon.from('channels').select('slug, channel_messages(id)').order('id').order('id', { referencedTable: 'channel_messages' })),
    [{ slug: 'public', channel_messages: [{ id: 1 }, { id: 4 }] }, { slug: 'random', channel_messages: [{ id: 2 }, { id: 3 }] }])
  // a non-SETOF function of a composite gives one row, all NULL, when it finds none
  assert.deepEqual(ok(await anon.from('members').select('username, latest_message(id)').in('username', ['awailas', 'kiwicopple']).order('username')),
    [{ username: 'awailas', latest_message: { id: null } }, { username: 'kiwicopple', latest_message: { id: 4 } }])
})

// ---- aggregates (db-aggregates-enabled; Plan.hs validateAggFunctions)
test('aggregates: count(), column aggregates, grouping, aliases and casts', async () => {
  assert.deepEqual(ok(await anon.from('albums').select('count()')), [{ count: 4 }])
  assert.deepEqual(ok(await anon.from('albums').select('total:count()')), [{ total: 4 }])
  assert.deepEqual(ok(await anon.from('albums').select('released.count()')), [{ count: 3 }])
  assert.deepEqual(ok(await anon.from('albums').select('artist_id, count()').order('artist_id')),
    [{ artist_id: 1, count: 2 }, { artist_id: 2, count: 1 }, { artist_id: 3, count: 1 }])
  assert.deepEqual(ok(await anon.from('tracks').select('album_id, seconds.avg(), seconds.max(), seconds.min()').in('album_id', [1, 3]).order('album_id')),
    [{ album_id: 1, avg: 258, max: 315, min: 201 }, { album_id: 3, avg: 257.5, max: 420, min: 95 }])
  // a cast after the aggregate applies to its result, before it to its input
  assert.deepEqual(ok(await anon.from('tracks').select('total:seconds.sum()::text')), [{ total: '1359' }])
  assert.deepEqual(ok(await anon.from('tracks').select('seconds::text.max()')), [{ max: '95' }])
  assert.deepEqual(ok(await anon.from('tracks').select('count()').gt('seconds', 200).single()), { count: 3 })
})
test('aggregates: in embeds, on a function, with a count, and parse errors', async () => {
  assert.deepEqual(ok(await anon.from('artists').select('name, albums(count)').in('id', [1, 2, 3]).order('id')),
    [{ name: 'The Quiet Ones', albums: [{ count: 2 }] }, { name: 'Blue Note Trio', albums: [{ count: 1 }] }, { name: 'Solo Pianist', albums: [{ count: 1 }] }])
  assert.deepEqual(ok(await anon.from('albums').select('title, tracks(n:count(), seconds.sum())').in('id', [1, 4]).order('id')),
    [{ title: 'First Light', tracks: [{ n: 2, sum: 516 }] }, { title: 'Preludes', tracks: [{ n: 1, sum: 140 }] }])
  assert.deepEqual(ok(await anon.rpc('album_tracks', { album: 1 }).select('seconds.sum()')), [{ sum: 516 }])
  const r = await anon.from('tracks').select('album_id, count()', { count: 'exact' })
  assert.equal(ok(r).length, 4)
  assert.equal(r.count, 4)
  // Parsec: "s" of "sum" was consumed, so no other aggregate is tried
  const e = failed(await anon.from('tracks').select('seconds.stddev()'), 400, 'PGRST100',
    '"failed to parse select parameter (seconds.stddev())" (line 1, column 9)')
  assert.equal(e.details, 'unexpected "t" expecting "sum"')
  failed(await anon.from('members').select('data->age.sum()'), 404, '42883', 'function sum(jsonb) does not exist')
})

// ---- writes (Plan.hs mutatePlan; Response.hs; QueryBuilder.hs mutatePlanToQuery)
test('writes return embeds, spreads, ordered and csv representations', async () => {
  const d = ok(await user.from('messages').insert({ message: 'emb', username: 'kiwicopple', channel_id: 2 })
    .select('message, members(username), channels(slug, channel_details(details))').single(), 201)
  assert.deepEqual(d, { message: 'emb', members: { username: 'kiwicopple' }, channels: { slug: 'random', channel_details: null } })
  assert.deepEqual(ok(await user.from('messages').update({ message: 'emb2' }).eq('message', 'emb').select('message, ...channels(slug)')),
    [{ message: 'emb2', slug: 'random' }])
  assert.deepEqual(ok(await user.from('messages').delete().eq('message', 'emb2').select('message, members(username)').single()),
    { message: 'emb2', members: { username: 'kiwicopple' } })
  assert.deepEqual(ok(await user.from('channels').insert([{ slug: 'b' }, { slug: 'a' }]).select('slug').order('slug').rollback(), 201),
    [{ slug: 'a' }, { slug: 'b' }])
  assert.equal(ok(await user.from('channels').insert([{ slug: 'c,1' }, { slug: 'd"2' }]).select('slug').csv().rollback(), 201),
    'id,slug\n"c,1"\n"d""2"')
})
test('writes: root filters on an insert are ignored, an embedded filter does not limit an update', async () => {
  // Plan.hs addFilters: a mutation's read part takes qsFiltersNotRoot only;
  // mutatePlan: an insert has no WHERE, an update the root filters only
  assert.deepEqual(ok(await user.from('channels').insert([{ slug: 'e' }, { slug: 'f' }]).select('slug').eq('slug', 'e').rollback(), 201),
    [{ slug: 'e' }, { slug: 'f' }])
  const u = await user.from('messages').update({ message: 'same' }, { count: 'exact' }).eq('channels.slug', 'random')
    .select('id, channels(slug)').order('id').rollback()
  assert.deepEqual(ok(u), [{ id: 1, channels: null }, { id: 2, channels: { slug: 'random' } },
    { id: 3, channels: { slug: 'random' } }, { id: 4, channels: null }])
  assert.equal(u.count, 4)
  // limit and order on a PATCH: parsed, not applied to the UPDATE
  assert.equal(ok(await user.from('members').update({ data: null }).order('username').limit(1).select('username').rollback()).length, 4)
})
test('writes: counts with representations, all count kinds', async () => {
  const i = await user.from('channels').insert([{ slug: 'g' }, { slug: 'h' }], { count: 'exact' }).select('slug')
  assert.deepEqual(ok(i, 201), [{ slug: 'g' }, { slug: 'h' }])
  assert.equal(i.count, 2)
  const d = await user.from('channels').delete({ count: 'exact' }).in('slug', ['g', 'h']).select('slug')
  assert.equal(ok(d).length, 2)
  assert.equal(d.count, 2)
  const up = await user.from('members').upsert([{ username: 'supabot' }, { username: 'zz' }], { count: 'exact' }).select('username').rollback()
  assert.deepEqual(ok(up, 201), [{ username: 'supabot' }, { username: 'zz' }])
  assert.equal(up.count, 2)
  // Response.hs: a write's Content-Range has a total if shouldCount (exact,
  // estimated); planned leaves "*", which postgrest-js parses to NaN
  const est = await user.from('members').update({ data: null }, { count: 'estimated' }).eq('username', 'awailas').select('username').rollback()
  assert.deepEqual(ok(est), [{ username: 'awailas' }])
  assert.equal(est.count, 1)
  const pl = await user.from('members').update({ data: null }, { count: 'planned' }).eq('username', 'awailas').rollback()
  assert.equal(ok(pl, 204), null)
  assert.ok(Number.isNaN(pl.count))
})
test('upsert: onConflict with spaces or quotes, ignoreDuplicates with select, defaultToNull false', async () => {
  const t = { album_id: 1, position: 1, title: 'Dawn', seconds: 201 }
  for (const onConflict of ['album_id, position', '"album_id","position"'])
    assert.deepEqual(ok(await user.from('tracks').upsert(t, { onConflict }).select('title')), [{ title: 'Dawn' }])
  const e = failed(await user.from('tracks').upsert(t, { onConflict: 'album_id,' }), 400, 'PGRST100',
    '"failed to parse on_conflict parameter (album_id,)" (line 1, column 10)')
  assert.equal(e.details, 'unexpected end of input expecting field name (* or [a..z0..9_$])')
  failed(await user.from('members').upsert({ username: 'x' }, { onConflict: 'data' }), 400, '42P10',
    'there is no unique or exclusion constraint matching the ON CONFLICT specification')
  // the existing row is left alone, only the new one comes back; the
  // columns= of a bulk write are the keys of all rows, missing ones NULL
  assert.deepEqual(ok(await user.from('members').upsert([{ username: 'supabot', status: 'OFFLINE' }, { username: 'u9' }],
    { onConflict: 'username', ignoreDuplicates: true }).select('username, status').rollback(), 201), [{ username: 'u9', status: null }])
  // missing=default: a key absent from a row takes the column default; a
  // column no row names is not written (the merge keeps its value)
  assert.deepEqual(ok(await user.from('members').upsert([{ username: 'kiwicopple', data: { a: 1 } }, { username: 'u10' }],
    { defaultToNull: false }).select('username, status, data').rollback(), 201),
  [{ username: 'kiwicopple', status: 'OFFLINE', data: { a: 1 } }, { username: 'u10', status: 'ONLINE', data: null }])
})
test('writes on views, bodies that are not a list of objects, constraint errors', async () => {
  assert.deepEqual(ok(await user.from('updatable_view').upsert({ username: 'supabot' }).select()), [{ username: 'supabot', non_updatable_column: 1 }])
  const v = failed(await user.from('non_updatable_view').update({ username: 'x' }).eq('username', 'supabot'), 500, '55000',
    'cannot update view "non_updatable_view"')
  assert.equal(v.details, 'Views containing LIMIT or OFFSET are not automatically updatable.')
  assert.equal(v.hint, 'To enable updating the view, provide an INSTEAD OF UPDATE trigger or an unconditional ON UPDATE DO INSTEAD rule.')
  const c = failed(await user.from('updatable_view').update({ non_updatable_column: 2 }).eq('username', 'x'), 400, '0A000',
    'cannot update column "non_updatable_column" of view "updatable_view"')
  assert.equal(c.details, 'View columns that are not columns of their base relation are not updatable.')
  // Payload.hs payloadAttributes: a scalar is an empty array, a list of
  // non-objects is refused
  assert.equal(ok(await user.from('tracks').insert(5), 201), null)
  assert.equal(ok(await user.from('tracks').insert(null), 201), null)
  failed(await user.from('tracks').insert([1, 2]), 400, 'PGRST102', 'All object keys must match')
  const fk = failed(await user.from('messages').insert({ message: 'x', username: 'nobody', channel_id: 1 }), 409, '23503',
    'insert or update on table "messages" violates foreign key constraint "messages_username_fkey"')
  assert.equal(fk.details, 'Key (username)=(nobody) is not present in table "members".')
  failed(await user.from('members').insert({ username: 'e', status: 'AWAY' }), 400, '22P02', 'invalid input value for enum member_status: "AWAY"')
  failed(await user.from('albums').insert({ artist_id: 1, title: 'x'.repeat(300) }), 400, '22001', 'value too long for type character varying(200)')
  failed(await user.from('albums').insert({ artist_id: 1, title: 't', rating: 9 }), 400, '23514', 'value for domain rating violates check constraint "rating_check"')
})
test('JSON forms of column types: interval, bigint, numeric, timestamptz, jsonb', async () => {
  assert.deepEqual(ok(await anon.from('typed_values').select('duration, n, ts').eq('id', 1)),
    [{ duration: '1 day 02:00:00', n: 1.5, ts: '2024-01-02T03:04:05+00:00' }])
  // a bigint is a JSON number: the text is exact, JSON.parse rounds it
  assert.deepEqual(ok(await anon.from('typed_values').select('big::text').eq('id', 1)), [{ big: '9007199254740993' }])
  // postgrest-js sends a BigInt as a string, which PostgreSQL parses exactly
  assert.deepEqual(ok(await user.from('typed_values').insert({ big: 9007199254740995n }).select('big::text').rollback(), 201),
    [{ big: '9007199254740995' }])
  const doc = { a: [1, { b: null }], 'k"': 'v', u: '☃' }
  assert.deepEqual(ok(await user.from('messages').insert({ message: 'j', username: 'supabot', channel_id: 1, data: doc }).select('data').rollback(), 201),
    [{ data: doc }])
})

// ---- rpc (Plan.hs callReadPlan; CallPlan.hs; Statements.hs mainCall)
test('rpc: a row argument as an object, by POST and HEAD; by GET it is text', async () => {
  const row = { username: 'kiwicopple', data: null, age_range: '[25,35)', status: 'OFFLINE', catchphrase: "'bat' 'cat'" }
  assert.deepEqual(ok(await anon.rpc('member_messages', { member_row: row }).select('id, channels(slug)')),
    [{ id: 4, channels: { slug: 'public' } }])
  // head with an object argument: postgrest-js POSTs with return=minimal,
  // which a call ignores: the body comes back (Response.hs CallReadPlan)
  const h = await anon.rpc('member_messages', { member_row: row }, { head: true, count: 'exact' })
  assert.equal(ok(h).length, 1)
  assert.equal(h.count, 1)
  failed(await anon.rpc('member_messages', { member_row: row }, { get: true }), 400, '22P02', 'malformed record literal: "[object Object]"')
  assert.deepEqual(ok(await anon.rpc('channel_of', { msg: { id: 1, channel_id: 2, username: 'supabot' } }).select('slug')), { slug: 'random' })
})
test('rpc: RETURNS TABLE with single and maybeSingle, variadic, uuid[] by GET', async () => {
  assert.deepEqual(ok(await anon.rpc('get_username_and_status', { name_param: 'supabot' })), [{ username: 'supabot', status: 'ONLINE' }])
  assert.deepEqual(ok(await anon.rpc('get_username_and_status', { name_param: 'supabot' }).single()), { username: 'supabot', status: 'ONLINE' })
  assert.equal(ok(await anon.rpc('get_username_and_status', { name_param: 'nobody' }).maybeSingle()), null)
  const s = failed(await anon.rpc('get_username_and_status', { name_param: 'nobody' }).single(), 406, 'PGRST116')
  assert.equal(s.details, 'The result contains 0 rows')
  assert.equal(ok(await anon.rpc('sum_all', { v: [1, 2, 3] })), 6)
  // CallPlan.hs: a variadic query parameter is one element per occurrence;
  // postgrest-js sends the array as one value {1,2,3}
  failed(await anon.rpc('sum_all', { v: [1, 2, 3] }, { get: true }), 400, '22P02', 'invalid input syntax for type integer: "{1,2,3}"')
  const ids = ['8c3ab3a1-8a3c-4f28-9f3d-2a6f0b1e1e11', '8c3ab3a1-8a3c-4f28-9f3d-2a6f0b1e1e12']
  assert.equal(ok(await anon.rpc('uuid_count', { ids }, { get: true })), 2)
  assert.equal(ok(await anon.rpc('uuid_count', { ids }, { head: true })), null)
})
test('rpc: counts (estimated is exact on a call, planned gives none), null and missing arguments', async () => {
  // Preferences.hs shouldCount: exact or estimated; MainTx.hs explains only reads
  for (const count of ['exact', 'estimated']) {
    const r = await anon.rpc('album_tracks', { album: 1 }, { count, get: true })
    assert.equal(ok(r).length, 2)
    assert.equal(r.count, 2)
  }
  await rec.rpc('album_tracks', { album: 1 }, { count: 'planned' })
  assert.equal(sent.headers['content-range'], '0-1/*')
  assert.equal(sent.headers['preference-applied'], 'count=planned')
  const s = await anon.rpc('member_status_of', { name_param: 'supabot' }, { head: true, count: 'exact' })
  assert.equal(ok(s), null)
  assert.equal(s.count, 1)
  assert.equal(ok(await anon.rpc('add', { a: null, b: 1 })), null)
  failed(await anon.rpc('add', { a: null, b: 1 }, { get: true }), 400, '22P02', 'invalid input syntax for type integer: "null"')
  const m = failed(await anon.rpc('add', { b: 1 }), 404, 'PGRST202', 'Could not find the function api.add(b) in the schema cache')
  assert.equal(m.hint, 'Perhaps you meant to call the function api.add(a, b)')
  const o = failed(await anon.rpc('pick', { x: 1 }), 300, 'PGRST203',
    'Could not choose the best candidate function between: api.pick(x => integer), api.pick(x => text), api.pick(x => date, y => integer)')
  assert.equal(o.hint, 'Try renaming the parameters or the function itself in the database so function overloading can be resolved')
})
test('rpc: maxAffected on a scalar or void function is PGRST128', async () => {
  for (const fn of ['add', 'touch'])
    failed(await user.rpc(fn, fn === 'add' ? { a: 1 } : {}).maxAffected(1), 400, 'PGRST128',
      'Function must return SETOF or TABLE when max-affected preference is used with handling=strict')
  failed(await user.rpc('album_tracks', { album: 1 }, { get: true }).maxAffected(1), 400, 'PGRST124')
  assert.equal(ok(await user.rpc('album_tracks', { album: 1 }, { get: true }).maxAffected(2)).length, 2)
  // max-affected applies to updates, deletes and calls only (Response.hs
  // responsePreferences): an insert and a read go through
  assert.equal(ok(await user.from('channels').insert([{ slug: 'm1' }, { slug: 'm2' }]).maxAffected(1).rollback(), 201), null)
  assert.equal(ok(await anon.from('members').select('username').maxAffected(1)).length, 4)
})
test('rpc: a large result streams (JSON, CSV, range, single refused)', async () => {
  const r = await anon.rpc('series', { n: 30000 }, { count: 'exact' })
  assert.equal(ok(r).length, 30000)
  assert.equal(r.count, 30000)
  assert.deepEqual(r.data[29999], { i: 30000, label: 'row 30000 ☃,"q"' })
  const c = ok(await anon.rpc('series', { n: 30000 }, { get: true }).csv())
  assert.ok(c.startsWith('i,label\n1,"row 1 ☃,""q"""\n'))
  assert.ok(c.endsWith('\n30000,"row 30000 ☃,""q"""'))
  const g = await anon.rpc('series', { n: 30000 }, { get: true, count: 'exact' }).range(29990, 40000)
  assert.equal(ok(g, 206).length, 10)
  assert.equal(g.count, 30000)
  const s = failed(await anon.rpc('series', { n: 30000 }, { get: true }).select('i').single(), 406, 'PGRST116')
  assert.equal(s.details, 'The result contains 30000 rows')
})

// ---- schema() (ApiRequest.hs getProfile: Accept-Profile on GET/HEAD, Content-Profile otherwise)
test('schema(): a second exposed schema for reads, writes and rpc', async () => {
  const p = () => anon.schema('personal')
  assert.deepEqual(ok(await p().from('members').select('username, status').order('username')),
    [{ username: 'kiwicopple', status: 'OFFLINE' }, { username: 'supabot', status: 'ONLINE' }])
  assert.equal(ok(await p().rpc('get_status', { name_param: 'kiwicopple' })), 'OFFLINE')
  assert.equal(ok(await p().rpc('get_status', { name_param: 'kiwicopple' }, { get: true })), 'OFFLINE')
  const h = await p().rpc('get_status', { name_param: 'supabot' }, { head: true, count: 'exact' })
  assert.equal(ok(h), null)
  assert.equal(h.count, 1)
  assert.deepEqual(ok(await user.schema('personal').from('members').insert({ username: 'p1' }).select().rollback(), 201),
    [{ username: 'p1', data: null, status: 'ONLINE' }])
  failed(await p().from('messages').select(), 404, 'PGRST205', "Could not find the table 'personal.messages' in the schema cache")
  // Response.hs contentTypeHeaders: Content-Profile goes with a body only
  await recUser.schema('personal').from('members').delete({ count: 'exact' }).eq('username', 'none')
  assert.equal(sent.request['content-profile'], 'personal')
  assert.deepEqual([sent.headers['content-profile'], sent.headers['content-range']], [undefined, '*/0'])
  await recUser.schema('personal').from('members').delete().eq('username', 'none').select()
  assert.equal(sent.headers['content-profile'], 'personal')
  // schema names are case sensitive; the hint lists db-schemas
  const e = failed(await anon.schema('API').from('artists').select(), 406, 'PGRST106', 'Invalid schema: API')
  assert.equal(e.hint, 'Only the following schemas are exposed: api, personal')
  failed(await user.schema('nope').rpc('add', { a: 1 }, { get: true }), 406, 'PGRST106', 'Invalid schema: nope')
})

// ---- filters: values the client does not quote or escape
const m = () => anon.from('members').select('username').order('username')
const names = async (q) => ok(await q).map((r) => r.username)
test('filter values: null, booleans, objects and arrays as postgrest-js writes them', async () => {
  // eq(col, null) is the text "null": a text column compares it, an integer one refuses it
  assert.deepEqual(await names(m().eq('username', null)), [])
  failed(await anon.from('artists').select('id').eq('id', null), 400, '22P02', 'invalid input syntax for type integer: "null"')
  failed(await anon.from('artists').select('id').eq('id', true), 400, '22P02', 'invalid input syntax for type integer: "true"')
  failed(await m().eq('data', { a: 1 }), 400, '22P02', 'invalid input syntax for type json')
  // is: null, true, false, unknown (any case); anything else is a parse error
  assert.deepEqual(ok(await anon.from('albums').select('id').is('released', 'NULL')), [{ id: 4 }])
  failed(await anon.from('artists').select('id').is('formed', true), 400, '42804', 'argument of IS TRUE must be type boolean, not type integer')
  const e = failed(await anon.from('albums').select('id').is('released', 'foo'), 400, 'PGRST100', '"failed to parse filter (is.foo)" (line 1, column 5)')
  assert.equal(e.details, 'unexpected "o" expecting isVal: (null, not_null, true, false, unknown)')
  // not(col, 'in', array): the array's toString has no parentheses
  const n = failed(await m().not('username', 'in', ['a', 'b']), 400, 'PGRST100', '"failed to parse filter (not.in.a,b)" (line 1, column 8)')
  assert.equal(n.details, 'unexpected "a" expecting "("')
  assert.deepEqual(await names(m().not('username', 'in', '(supabot)')), ['awailas', 'dragarcia', 'kiwicopple'])
  // in(): quotes are added only around , ( ); a lone " stays part of the value
  assert.deepEqual(await names(m().in('username', ['a"b', 'supabot', 'a\\b'])), ['supabot'])
  assert.deepEqual(ok(await anon.from('artists').select('id').in('id', [])), [])
  failed(await anon.from('artists').select('id').in('id', [null, 1]), 400, '22P02')
  failed(await anon.from('albums').select('id').isDistinct('released', null), 400, '22007', 'invalid input syntax for type date: "null"')
})
test('filter values: reserved URL characters, unicode, dots, like wildcards, regexes', async () => {
  assert.deepEqual(await names(m().eq('username', 'a.b.c')), [])
  assert.deepEqual(await names(m().eq('username', '50% & #1 +x=y?')), [])
  assert.deepEqual(await names(m().neq('username', '日本語')), ['awailas', 'dragarcia', 'kiwicopple', 'supabot'])
  assert.deepEqual(await names(m().like('username', '*bot')), ['supabot'])
  assert.deepEqual(await names(m().like('username', 'sup_bot')), ['supabot'])
  assert.deepEqual(ok(await anon.from('artists').select('id').ilike('name', '% note %')), [{ id: 2 }])
  assert.deepEqual(await names(m().regexMatch('username', '^(supa|kiwi).*$')), ['kiwicopple', 'supabot'])
  assert.deepEqual(ok(await anon.from('albums').select('id').contains('tags', []).order('id')), [{ id: 1 }, { id: 2 }, { id: 3 }])
  assert.deepEqual(ok(await anon.from('albums').select('id').overlaps('tags', '{jazz,live}').order('id')), [{ id: 1 }, { id: 3 }])
  assert.deepEqual(ok(await anon.from('albums').select('id').not('tags', 'cs', '{live}').order('id')), [{ id: 2 }, { id: 3 }])
  assert.deepEqual(ok(await anon.from('messages').select('id').textSearch('message', 'hello', { type: 'websearch' })), [{ id: 1 }])
  failed(await m().textSearch('catchphrase', 'fat', { config: 'nope' }), 400, '42704', 'text search configuration "nope" does not exist')
  failed(await m().textSearch('catchphrase', 'fat &'), 400, '42601', 'no operand in tsquery: "fat &"')
})
test('or(): fts, in, is, jsonb containment, json paths, like(all), nested not.and, parse errors', async () => {
  assert.deepEqual(await names(m().or('catchphrase.fts(english).fat & cat,username.eq.awailas')), ['awailas', 'supabot'])
  assert.deepEqual(await names(m().or('catchphrase.wfts(english).bat -rat,username.eq.awailas')), ['awailas', 'kiwicopple'])
  assert.deepEqual(await names(m().or('username.in.(supabot,awailas),status.eq.OFFLINE')), ['awailas', 'kiwicopple', 'supabot'])
  assert.deepEqual(await names(m().or('data.is.null,username.eq.supabot')), ['awailas', 'supabot'])
  assert.deepEqual(await names(m().or('data.cs.{"age": 25},username.eq.supabot')), ['kiwicopple', 'supabot'])
  assert.deepEqual(await names(m().or('data->>age.gt.25,username.eq.awailas')), ['awailas', 'supabot'])
  assert.deepEqual(await names(m().or('username.like(all).{%a%,%i%}')), ['awailas', 'dragarcia'])
  assert.deepEqual(await names(m().or('not.and(status.eq.ONLINE,username.like.s*)')), ['awailas', 'dragarcia', 'kiwicopple'])
  // QueryParams.hs pLogicSingleVal: an unquoted value ends at , or ): a range needs quotes
  const r = failed(await m().or('age_range.sl.[26,30),username.eq.awailas'), 400, 'PGRST100')
  assert.equal(r.message, '"failed to parse logic tree ((age_range.sl.[26,30),username.eq.awailas))" (line 1, column 23)')
  assert.deepEqual(await names(m().or('age_range.sl."[26,30)",username.eq.awailas')), ['awailas', 'supabot'])
  const b = failed(await m().or('username.eq'), 400, 'PGRST100', '"failed to parse logic tree ((username.eq))" (line 1, column 15)')
  assert.equal(b.details, 'unexpected ")" expecting operator (eq, gt, ...)')
  const z = failed(await m().or(''), 400, 'PGRST100', '"failed to parse logic tree (())" (line 1, column 4)')
  assert.equal(z.details, 'unexpected ")" expecting field name (* or [a..z0..9_$]), negation operator (not) or logic operator (and, or)')
})

// ---- modifiers
test('limit and range edge cases (ApiRequest.hs getRanges, RangeQuery.hs)', async () => {
  const q = (o) => anon.from('messages').select('id', o).order('id')
  assert.deepEqual(ok(await q().limit(0)), [])
  const z = await q({ count: 'exact' }).limit(0)
  assert.deepEqual(ok(z, 206), [])
  assert.equal(z.count, 4)
  // range(3, 1) asks for limit=-1
  const i = failed(await q().range(3, 1), 416, 'PGRST103', 'Requested range not satisfiable')
  assert.equal(i.details, 'Limit should be greater than or equal to zero.')
  // offset=-1&limit=3 is rows -1..1, cut to 0..1
  assert.deepEqual(ok(await q().range(-1, 1)), [{ id: 1 }, { id: 2 }])
  const e = await q({ count: 'exact' }).range(4, 5)
  assert.deepEqual(ok(e, 206), [])
  assert.equal(e.count, 4)
  const h = await anon.from('messages').select('id', { count: 'exact', head: true }).range(10, 11)
  assert.equal(h.status, 416)
  assert.deepEqual(h.error, { message: '' })
})
test('HEAD with single, csv, geojson and explain', async () => {
  const s = await anon.from('artists').select('id', { head: true }).single()
  assert.equal(s.status, 406)
  assert.equal(s.statusText, 'Not Acceptable')
  const one = await anon.from('artists').select('id', { head: true, count: 'exact' }).eq('id', 1).single()
  assert.equal(ok(one), null)
  assert.equal(one.count, 1)
  assert.equal(ok(await anon.from('artists').select('id', { head: true }).csv()), null)
  assert.equal(ok(await anon.from('artists').select('id', { head: true }).explain()), null)
  const g = await anon.from('artists').select('id', { head: true }).geojson()
  assert.equal(g.status, 400) // no geometry column: ST_AsGeoJSON's error, no body to a HEAD
})
test('explain: the media type it wraps (for=), with single, maybeSingle and csv', async () => {
  await rec.from('artists').select('id').eq('id', 1).single().explain({ format: 'json' })
  assert.equal(sent.request.accept, 'application/vnd.pgrst.plan+json; for="application/vnd.pgrst.object+json"; options=;')
  assert.equal(sent.headers['content-type'], 'application/vnd.pgrst.plan+json; for="application/vnd.pgrst.object+json"; charset=utf-8')
  await rec.from('artists').select('id').csv().explain({ analyze: true, verbose: true })
  assert.equal(sent.headers['content-type'], 'application/vnd.pgrst.plan+text; for="text/csv"; options=analyze|verbose; charset=utf-8')
  assert.match(ok(await anon.from('artists').select('id').csv().explain({ analyze: true })), /CTE Scan on pgrst_source/)
  // maybeSingle: the client takes the one plan out of the JSON array
  const j = ok(await anon.from('artists').select('id').maybeSingle().explain({ format: 'json' }))
  assert.equal(j.Plan['Node Type'], 'Aggregate')
})
test('geojson: single, empty, a write, an rpc without geometry (SqlFragment.hs asGeoJsonF)', async () => {
  const s = await anon.from('shops').select('id, shop_geom').eq('id', 1).single().geojson()
  if (s.status === 404) return // no PostGIS here: client_schema.sql made no api.shops
  const feature = (coordinates, properties) => ({ type: 'Feature', geometry: { type: 'Point', coordinates }, properties })
  // the collection is one JSON object: Accept geo+json replaces single()'s
  assert.deepEqual(ok(s), { type: 'FeatureCollection', features: [feature([-71.10044, 42.373695], { id: 1 })] })
  assert.deepEqual(ok(await anon.from('shops').select('id, shop_geom').eq('id', 99).geojson()), { type: 'FeatureCollection', features: [] })
  assert.deepEqual(ok(await user.from('shops').insert({ id: 2, address: 'x', shop_geom: 'SRID=4326;POINT(1 2)' }).select().geojson().rollback(), 201),
    { type: 'FeatureCollection', features: [feature([1, 2], { id: 2, address: 'x' })] })
  assert.equal(ok(await user.from('shops').insert({ id: 2, shop_geom: 'SRID=4326;POINT(1 2)' }).geojson().rollback(), 201), null)
  failed(await anon.rpc('album_tracks', { album: 1 }).geojson(), 400, '22023', 'geometry column is missing')
  // as JSON, a geometry is its GeoJSON (PostGIS's cast to json)
  assert.deepEqual(ok(await anon.from('shops').select('shop_geom').eq('id', 1)), [{ shop_geom: { type: 'Point',
    crs: { type: 'name', properties: { name: 'EPSG:4326' } }, coordinates: [-71.10044, 42.373695] } }])
})
test('stripNulls on an rpc, with single, and a 406 from an Accept the client never sends', async () => {
  assert.deepEqual(ok(await anon.rpc('album_tracks', { album: 4 }).select('id, seconds, title').stripNulls()),
    [{ id: 6, seconds: 140, title: 'Prelude in C' }])
  assert.deepEqual(ok(await anon.from('messages').select('id, data').eq('id', 1).single().stripNulls()), { id: 1 })
  const e = failed(await anon.from('artists').select('id').setHeader('Accept', 'application/xml'), 406, 'PGRST107',
    'None of these media types are available: application/xml')
  assert.equal(e.hint, null)
})

// ---- errors (Error.hs)
test('RAISE SQLSTATE PGRST: code, message, details, hint, status, status_text, headers', async () => {
  const r = await rec.rpc('raise_pgrst', { msg: { code: '123', message: 'm', details: 'd', hint: 'h' },
    det: { status: 418, headers: { 'X-Powered-By': 'Nerd' } } })
  assert.deepEqual([r.status, r.statusText, r.error], [418, "I'm a teapot", { code: '123', details: 'd', hint: 'h', message: 'm' }])
  assert.equal(sent.headers['x-powered-by'], 'Nerd')
  const t = await anon.rpc('raise_pgrst', { msg: { code: 'X', message: 'm' }, det: { status: 409, status_text: 'Mine', headers: {} } })
  assert.deepEqual([t.status, t.statusText, t.error], [409, 'Mine', { code: 'X', details: null, hint: null, message: 'm' }])
  const n = failed(await anon.rpc('raise_pgrst_without_detail', { msg: { code: 'X', message: 'm' } }), 500, 'PGRST121',
    'Could not parse JSON in the "RAISE SQLSTATE \'PGRST\'" error')
  assert.equal(n.details, 'DETAIL is missing in the RAISE statement')
  assert.equal(n.hint, "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: 'status_text'.")
  const b = failed(await anon.rpc('raise_pgrst', { msg: { message: 'm' }, det: { status: 400, headers: {} } }), 500, 'PGRST121')
  assert.equal(b.details, 'Invalid JSON value for MESSAGE: \'{"message":"m"}\'')
  assert.equal(b.hint, "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: 'details', 'hint'.")
})
test('SQLSTATEs to statuses (Error.hs mapSQLtoHTTP), PT statuses with the message as reason', async () => {
  const p = await anon.rpc('raise_plain', { msg: 'oops' })
  assert.deepEqual([p.status, p.statusText, p.error], [400, 'Bad Request', { code: 'P0001', details: 'a detail', hint: 'a hint', message: 'oops' }])
  const statuses = { P0002: 500, 22012: 400, 23514: 400, 40001: 500, 57014: 500, '42P01': 404, 42883: 404, '0P000': 403,
    28000: 403, 55000: 500, 53100: 503, XX000: 500, '2D000': 500, '42P17': 500, 25001: 500, 39000: 500, HV000: 500 }
  for (const [c, status] of Object.entries(statuses)) {
    const r = await anon.rpc('raise_sqlstate', { c })
    assert.deepEqual([c, r.status, r.error], [c, status, { code: c, details: null, hint: null, message: `raised ${c}` }])
  }
  const u = failed(await anon.rpc('raise_pt', { code: 'PT499' }), 499, 'PT499', 'custom')
  assert.equal(u.details, 'raised')
  const ok204 = await anon.rpc('raise_pt', { code: 'PT204' })
  assert.deepEqual([ok204.status, ok204.statusText, ok204.error, ok204.data], [204, 'custom', null, null])
})
test('JWT errors as the client sees them (Auth.hs, Error.hs JwtError)', async () => {
  const as = (token) => new PostgrestClient(base, { retry: false, headers: { Authorization: `Bearer ${token}` } })
    .from('artists').select('id').eq('id', 1)
  const x = failed(await as(jwt({ role: 'web_user', exp: 1000 })), 401, 'PGRST303', 'JWT expired')
  assert.equal(x.details, null)
  failed(await as(jwt({ role: 'web_user', nbf: 99999999999 })), 401, 'PGRST303', 'JWT not yet valid')
  const s = failed(await as(jwt({ role: 'web_user' }) + 'x'), 401, 'PGRST301', 'No suitable key or wrong key type')
  assert.equal(s.details, 'None of the keys was able to decode the JWT')
  failed(await as('sb_publishable_abc'), 401, 'PGRST301', 'Expected 3 parts in JWT; got 1')
  failed(await as(jwt({ role: 'nobody' })), 401, '22023', 'role "nobody" does not exist')
  failed(await as(jwt({ role: 'not_granted' })), 403, '42501', 'permission denied to set role "not_granted"')
  // no role claim: the anonymous role; an aud claim without jwt-aud: accepted
  assert.deepEqual(ok(await as(jwt({ sub: 'x', aud: 'somebody' }))), [{ id: 1 }])
  await new PostgrestClient(base, { retry: false, fetch: recording, headers: { Authorization: `Bearer ${jwt({ exp: 1 })}` } }).from('artists').select()
  assert.equal(sent.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="JWT expired"')
})
test('paths postgrest-js can build: PGRST125, PGRST205, PGRST202, PATCH on rpc', async () => {
  failed(await anon.from('a/b').select(), 404, 'PGRST125', 'Invalid path specified in request URL')
  failed(await anon.from('artists/').select(), 404, 'PGRST125', 'Invalid path specified in request URL')
  failed(await anon.rpc('a/b'), 404, 'PGRST125')
  failed(await anon.from('a b').select(), 404, 'PGRST205', "Could not find the table 'api.a b' in the schema cache")
  failed(await anon.from('api.artists').select(), 404, 'PGRST205', "Could not find the table 'api.api.artists' in the schema cache")
  failed(await anon.rpc(''), 404, 'PGRST202', 'Could not find the function api. without parameters in the schema cache')
  failed(await new PostgrestClient(`${base}/rpc`, { retry: false }).from('add').update({ a: 1 }), 405, 'PGRST101',
    'Cannot use the PATCH method on RPC')
})

await run()
