/* The one-pass row reader (lib/parse/json_row.c) against its oracle, the
 * strict reader through json-c (pgr_json_parse_body_value): whatever the
 * one-pass reader takes, the strict reader takes too, to an object with
 * the same members (a repeated key's last value); it takes the plain
 * rows a bulk import is made of; it declines what is not plain; and
 * random mutations of rows never make it take what the strict reader
 * refuses or reads otherwise. */
#include <check.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "parse/json_row.h"
#include "parse/json_value.h"
#include "util/json_strict.h"

enum { MAX_MEMBERS = 64 };

typedef struct members {
    size_t n;
    json_object *key[MAX_MEMBERS];     /* the key as a JSON string */
    json_object *value[MAX_MEMBERS];   /* NULL: JSON null */
    bool ok;
} members;

/* The text s[0..n) read by the strict reader; false when it refuses it. */
static bool strict_value(const char *s, size_t n, json_object **out)
{
    return pgr_json_parse_strict(s, n, out);
}

static bool collect(void *ctx, const char *key, size_t key_len, bool key_escaped,
                    const char *value, size_t value_len)
{
    members *m = ctx;
    char quoted[512];
    if (m->n == MAX_MEMBERS || key_len + 2 >= sizeof quoted)
        return m->ok = false;
    /* the escaped flag says whether the key holds a backslash */
    if (key_escaped != (memchr(key, '\\', key_len) != NULL))
        m->ok = false;
    quoted[0] = '"';
    memcpy(quoted + 1, key, key_len);
    quoted[key_len + 1] = '"';
    if (!strict_value(quoted, key_len + 2, &m->key[m->n]) ||
        !strict_value(value, value_len, &m->value[m->n]))
        m->ok = false;
    m->n++;
    return true;
}

static void release(members *m)
{
    for (size_t i = 0; i < m->n; i++) {
        json_object_put(m->key[i]);
        json_object_put(m->value[i]);
    }
}

/* Whether the one-pass reader takes s[0..n) (max_containers deep); when
 * it does, the strict reader (levels as for an NDJSON line of depth
 * max_containers + 1) must take it to an object with those members. */
static bool plain_agrees(const char *s, size_t n, int max_containers)
{
    members m = {.ok = true};
    bool plain = pgr_json_row_plain(s, n, max_containers, collect, &m);
    if (!plain) {
        release(&m);
        return false;
    }
    ck_assert_msg(m.ok, "[%.*s]: a member is not JSON", (int)n, s);
    bool deep = false;
    json_object *o = pgr_json_parse_body_value(s, n, max_containers + 1, &deep);
    ck_assert_msg(o != NULL, "[%.*s] taken, the strict reader refuses it", (int)n, s);
    ck_assert_msg(json_object_is_type(o, json_type_object), "[%.*s] not an object", (int)n, s);
    size_t unique = 0;
    for (size_t i = 0; i < m.n; i++) {
        const char *k = json_object_get_string(m.key[i]);
        bool last = true;
        for (size_t j = i + 1; j < m.n; j++)
            last = last && strcmp(k, json_object_get_string(m.key[j])) != 0;
        if (!last)
            continue;
        unique++;
        json_object *v = NULL;
        ck_assert_msg(json_object_object_get_ex(o, k, &v), "[%.*s]: no key %s", (int)n, s, k);
        ck_assert_msg(json_object_equal(v, m.value[i]), "[%.*s]: key %s differs", (int)n, s, k);
    }
    ck_assert_uint_eq(unique, (size_t)json_object_object_length(o));
    json_object_put(o);
    release(&m);
    return true;
}

static bool plain(const char *s)
{
    return plain_agrees(s, strlen(s), 8);
}

/* The rows bulk imports are made of. */
static const char *const plain_rows[] = {
    "{}",
    " {\"a\":1}\r\n",
    "{\"id\": 1, \"name\": \"customer 0\", \"amount\": 0.00, \"at\": \"2026-01-01T00:00:00+00:00\","
    " \"doc\": {\"k\": 0, \"tag\": \"t0\", \"vip\": true}}",
    "{\"a\":-0,\"b\":-12.5,\"c\":123456789012345678,\"d\":0.000001}",
    "{\"a\":true,\"b\":false,\"c\":null,\"d\":[],\"e\":{},\"f\":[{},[]]}",
    "{\"t\":\"tab\\tnl\\nbs\\\\q\\\"sl\\/b\\bf\\fr\\r\",\"u\":\"\\u00e9\\u20AC\\u0001\"}",
    "{\"\\u0074\":\"escaped key\",\"k\\\"q\":1}",
    "{\"e\":\"\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80\",\"\xc3\xa9\":2}",
    "{\"a\":1,\"a\":{\"x\":[1,2]}}",
    "{\"n\":{\"o\":{\"p\":[[[1]]]}}}",
    "{ \"s\" : \"\" , \"w\"\t:\n[ 1 , \"]}\" ] }",
    "{\"\":0}",
};

START_TEST(takes_plain_rows)
{
    for (size_t i = 0; i < sizeof plain_rows / sizeof *plain_rows; i++)
        ck_assert_msg(plain(plain_rows[i]), "[%s] declined", plain_rows[i]);
}
END_TEST

/* Not JSON, not an object, or JSON the strict reader may read otherwise
 * or PostgreSQL refuses: declined, the strict reader answers. */
START_TEST(declines_the_rest)
{
    static const char *const rows[] = {
        "", " ", "[1]", "5", "null", "\"x\"", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}",
        "{\"a\":1}}", "{\"a\":1} x", "{\"a\":1}{}", "{'a':1}", "{a:1}", "{\"a\":01}",
        "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}", "{\"a\":-}", "{\"a\":1e5}", "{\"a\":1E-2}",
        "{\"a\":1234567890123456789}", "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":tru}",
        "{\"a\":nul}", "{\"a\":True}", "{\"a\":\"raw\ttab\"}", "{\"a\":\"nl\n\"}",
        "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\u12g4\"}", "{\"a\":\"\\u0000\"}",
        "{\"a\\u0000\":1}", "{\"a\":\"\\ud83d\\ude00\"}", "{\"a\":\"\\udc00\"}",
        "{\"a\":\"\\ud800\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xc3\"}", "{\"a\":\"\xc0\xaf\"}",
        "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf4\x90\x80\x80\"}", "{\"a\":\"unterminated}",
        "{\"a\":[1,]}", "{\"a\":[1 2]}", "{\"a\":{\"b\"}}", "{\"a\":[}", "{\"a\":{]}",
        "{\"a\":1 \"b\":2}", "{\"a\" 1}", "\xef\xbb\xbf{\"a\":1}", "{\"a\":1}\v",
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        ck_assert_msg(!plain(rows[i]), "[%s] taken", rows[i]);
    /* NUL bytes, inside a string and after the object */
    static const char nul_inside[] = "{\"a\":\"x\0y\"}", nul_after[] = "{\"a\":1}\0";
    ck_assert(!plain_agrees(nul_inside, sizeof nul_inside - 1, 8));
    ck_assert(!plain_agrees(nul_after, sizeof nul_after - 1, 8));
}
END_TEST

static bool ignore_member(void *ctx, const char *key, size_t key_len, bool key_escaped,
                          const char *value, size_t value_len)
{
    (void)ctx, (void)key, (void)key_len, (void)key_escaped, (void)value, (void)value_len;
    return true;
}

/* A JSON array's element read in one pass with the text after it: taken
 * up to its '}' whatever follows; cut anywhere before that, never taken,
 * and where the cut leaves all of it plain, short (wait for more). */
START_TEST(prefix_finds_the_end)
{
    for (size_t i = 0; i < sizeof plain_rows / sizeof *plain_rows; i++) {
        const char *row = plain_rows[i];
        while (*row == ' ')
            row++;
        size_t n = strlen(row);
        while (n > 0 && (row[n - 1] == '\r' || row[n - 1] == '\n'))
            n--;
        char text[512];
        ck_assert_uint_lt(n + 8, sizeof text);
        memcpy(text, row, n);
        memcpy(text + n, " ,{]x\"", 6);
        size_t end = 0;
        ck_assert_int_eq(pgr_json_row_plain_prefix(text, n + 6, 8, ignore_member, NULL, &end),
                         PGR_JSON_ROW_TAKEN);
        ck_assert_uint_eq(end, n);
        for (size_t cut = 0; cut < n; cut++) {
            pgr_json_row_verdict v = pgr_json_row_plain_prefix(text, cut, 8, ignore_member, NULL,
                                                               &end);
            ck_assert_msg(v == (cut == 0 ? PGR_JSON_ROW_DECLINED : PGR_JSON_ROW_SHORT),
                          "[%.*s] cut at %zu: %d", (int)n, row, cut, v);
        }
    }
    size_t end;
    ck_assert_int_eq(pgr_json_row_plain_prefix("{\"a\":1e5}", 9, 8, ignore_member, NULL, &end),
                     PGR_JSON_ROW_DECLINED);
    ck_assert_int_eq(pgr_json_row_plain_prefix(" {}", 3, 8, ignore_member, NULL, &end),
                     PGR_JSON_ROW_DECLINED);
}
END_TEST

/* "{"a":" then d-1 arrays around 1: d containers. */
static size_t nested(char *buf, int d)
{
    size_t n = (size_t)sprintf(buf, "{\"a\":");
    for (int i = 1; i < d; i++)
        buf[n++] = '[';
    buf[n++] = '1';
    for (int i = 1; i < d; i++)
        buf[n++] = ']';
    buf[n++] = '}';
    buf[n] = '\0';
    return n;
}

/* Nesting: taken up to max_containers (and never past 64), where the
 * strict reader takes it too (plain_agrees). */
START_TEST(nesting_is_bounded)
{
    char buf[256];
    for (int max = 1; max <= 70; max++) {
        for (int d = 1; d <= max + 1 && d < 100; d++) {
            size_t n = nested(buf, d);
            bool taken = plain_agrees(buf, n, max);
            ck_assert_msg(taken == (d <= max && d <= 64), "depth %d of %d: %d", d, max, taken);
        }
    }
    ck_assert(!plain_agrees("{\"a\":1}", 7, 0));
}
END_TEST

/* Rows mutated at random, byte by byte: whatever is taken agrees with
 * the strict reader (plain_agrees asserts it); some are taken. */
START_TEST(random_mutations_agree)
{
    static const char pieces[] = "\"\\{}[],: \t\n0123456789-.eEuUdDfaltrn\x80\xc3\xa9\xff\x01/";
    unsigned seed = 11;
    size_t taken = 0, tried = 0;
    char buf[512];
    for (int t = 0; t < 30000; t++) {
        const char *base = plain_rows[(size_t)rand_r(&seed) % (sizeof plain_rows /
                                                               sizeof *plain_rows)];
        size_t n = strlen(base);
        memcpy(buf, base, n);
        int edits = 1 + rand_r(&seed) % 3;
        for (int e = 0; e < edits; e++) {
            char c = pieces[(size_t)rand_r(&seed) % (sizeof pieces - 1)];
            size_t at = (size_t)rand_r(&seed) % (n + 1);
            switch (rand_r(&seed) % 3) {
            case 0:   /* replace */
                if (at < n)
                    buf[at] = c;
                break;
            case 1:   /* insert */
                if (n + 1 < sizeof buf) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = c;
                    n++;
                }
                break;
            default:   /* delete */
                if (at < n) {
                    memmove(buf + at, buf + at + 1, n - at - 1);
                    n--;
                }
            }
        }
        tried++;
        taken += plain_agrees(buf, n, 1 + rand_r(&seed) % 6);
    }
    /* the mutations keep a good share of the rows valid */
    ck_assert_uint_gt(taken, tried / 20);
    ck_assert_uint_lt(taken, tried);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("json_row");
    TCase *tc = tcase_create("json_row");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, takes_plain_rows);
    tcase_add_test(tc, declines_the_rest);
    tcase_add_test(tc, prefix_finds_the_end);
    tcase_add_test(tc, nesting_is_bounded);
    tcase_add_test(tc, random_mutations_agree);
    suite_add_tcase(s, tc);
    return check_run(s);
}
