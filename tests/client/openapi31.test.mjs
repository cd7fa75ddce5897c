// pgrest's OpenAPI 3.1 document (docs/openapi.md) as tools take it: validated
// against the official OpenAPI JSON schemas (npm @seriousme/openapi-schema-validator,
// which bundles the OAI's schema files) and fed to a client generator (npm
// openapi-typescript). The test schema's document always; Chinook's too when
// tests/client/run.py started a server on it (PGREST_CHINOOK_URL, which needs
// ../shared/bench/chinook.sql).
// Usage: node openapi31.test.mjs BASE_URL JWT_SECRET (helpers.mjs).
import assert from 'node:assert/strict'
import { Validator } from '@seriousme/openapi-schema-validator'
import openapiTS, { astToString } from 'openapi-typescript'
import { base, run, test } from './helpers.mjs'

const V31 = 'application/openapi+json;version=3.1'

async function documentOf(url, accept) {
  const res = await fetch(url + '/', { headers: { Accept: accept } })
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type'), /^application\/openapi\+json/)
  return res.json()
}

async function assertValid(doc) {
  const result = await new Validator().validate(doc)
  assert.equal(result.valid, true, String(JSON.stringify(result.errors)).slice(0, 2000))
}

// The generated module names every path and schema the document has.
async function generatedTypes(doc) {
  const ts = astToString(await openapiTS(doc))
  for (const path of Object.keys(doc.paths))
    assert.ok(ts.includes(`"${path}": {`), `no type for ${path}`)
  for (const name of Object.keys(doc.components.schemas ?? {}))
    assert.ok(ts.includes(`${/^[A-Za-z_]\w*$/.test(name) ? name : `"${name}"`}: {`),
      `no schema type for ${name}`)
  return ts
}

test('GET / as OpenAPI 3.1 is valid against the official 3.1 schema', async () => {
  const doc = await documentOf(base, V31)
  assert.equal(doc.openapi, '3.1.0')
  assert.ok(doc.paths['/messages'].get.responses['200'].content['application/json'])
  // a table name with a space: its path as it is, its components escaped
  assert.equal(doc.paths['/order lines'].post.requestBody.$ref,
    '#/components/requestBodies/body.order-20lines')
  assert.ok(doc.components.schemas['order-20lines'].properties['größe'])
  assert.ok(doc.components.parameters['rowFilter.order-20lines.gr-C3-B6-C3-9Fe'])
  await assertValid(doc)
})

test('plain GET / stays PostgREST\'s Swagger 2.0, valid against the 2.0 schema', async () => {
  for (const accept of ['application/openapi+json', 'application/json', '*/*']) {
    const doc = await documentOf(base, accept)
    assert.equal(doc.swagger, '2.0', accept)
    assert.equal(doc.openapi, undefined)
  }
  await assertValid(await documentOf(base, 'application/openapi+json'))
})

test('openapi-typescript generates the client types of the 3.1 document', async () => {
  const ts = await generatedTypes(await documentOf(base, V31))
  // a NOT NULL column is required and typed, a nullable one may be null
  assert.match(ts, /messages: \{[^}]*\bid: number;/s)
  assert.match(ts, /\| null;/)
})

const chinook = process.env.PGREST_CHINOOK_URL
if (chinook) {
  test('Chinook\'s 3.1 document: valid, and generated', async () => {
    const doc = await documentOf(chinook, V31)
    assert.ok(doc.paths['/track'] && doc.paths['/invoice_line'], Object.keys(doc.paths).join(','))
    await assertValid(doc)
    const ts = await generatedTypes(doc)
    assert.match(ts, /track: \{[^}]*\btrack_id: number;/s)
  })
}

run()
