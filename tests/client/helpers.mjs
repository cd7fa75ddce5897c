// What the client test files share: the clients, a JWT maker, the case
// registry and its runner, and the two assertions on a postgrest-js
// answer ({ data, error, count, status, statusText }).
// A test file is run as: node FILE BASE_URL JWT_SECRET; it prints
// "ok - name" / "not ok - name: reason" per case and ends with
// "client: P passed, F failed, 0 skipped" (tests/client/run.py sums them).
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { PostgrestClient } from '@supabase/postgrest-js'

export const [base, secret] = process.argv.slice(2)

const b64 = (s) => Buffer.from(s).toString('base64url')
export function jwt(claims) {
  const head = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))
  const body = b64(JSON.stringify(claims))
  const sig = crypto.createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${sig}`
}

// retries off: a 503 must show, not be retried away
export const anon = new PostgrestClient(base, { retry: false })
export const user = new PostgrestClient(base, {
  retry: false,
  headers: { Authorization: `Bearer ${jwt({ role: 'web_user', sub: 'alice' })}` },
})

export const ok = (r, status = 200) => {
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(r.status, status)
  return r.data
}
export const failed = (r, status, code, message) => {
  assert.equal(r.status, status, JSON.stringify(r))
  assert.equal(r.error.code, code)
  if (message !== undefined) assert.equal(r.error.message, message)
  assert.equal(r.data, null)
  return r.error
}

const cases = []
export const test = (name, fn) => cases.push([name, fn])

// Runs the registered cases in order (later ones may rely on the rows
// earlier ones left) and exits 1 if any failed.
export async function run() {
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
}
