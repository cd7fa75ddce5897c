/* Preference-Applied for every method under every combination of the
 * preferences, as PostgREST builds it (Response.hs responsePreferences
 * then Preferences.hs prefAppliedHeader): resolution only on POST to a
 * table with a key (or ?on_conflict), missing on POST and PATCH, return
 * on the four writes, count / tx / handling / timezone everywhere,
 * max-affected on PATCH, DELETE and calls and only with handling=strict;
 * always in the order resolution, missing, return, count, tx, handling,
 * timezone, max-affected. The expected value is computed here from that
 * rule, independently of the library's code. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

enum { RESOLUTION, MISSING, RETURN, COUNT, TX, HANDLING, TIMEZONE, MAX_AFFECTED, N_PREFS };

static const char *const pref_text[N_PREFS] = {
    "resolution=merge-duplicates", "missing=default", "return=representation", "count=exact",
    "tx=rollback", "handling=strict", "timezone=UTC", "max-affected=100"};

typedef enum kind { READ, CREATE, UPDATE, UPSERT, DELETE, CALL } kind;

static bool shown(kind k, int pref, unsigned set)
{
    switch (pref) {
    case RESOLUTION: return k == CREATE;
    case MISSING: return k == CREATE || k == UPDATE;
    case RETURN: return k == CREATE || k == UPDATE || k == UPSERT || k == DELETE;
    case MAX_AFFECTED:
        return (k == UPDATE || k == DELETE || k == CALL) && (set & (1u << HANDLING));
    default: return true;
    }
}

static void expected(kind k, unsigned set, char *out, size_t cap)
{
    out[0] = '\0';
    for (int p = 0; p < N_PREFS; p++)
        if ((set & (1u << p)) && shown(k, p, set)) {
            if (out[0] != '\0')
                strncat(out, ", ", cap - strlen(out) - 1);
            strncat(out, pref_text[p], cap - strlen(out) - 1);
        }
}

/* The Prefer header lists them in reverse: the order of the answer is
 * PostgREST's, not the request's. */
static void prefer(unsigned set, char *out, size_t cap)
{
    out[0] = '\0';
    for (int p = N_PREFS - 1; p >= 0; p--)
        if (set & (1u << p)) {
            if (out[0] != '\0')
                strncat(out, ",", cap - strlen(out) - 1);
            strncat(out, pref_text[p], cap - strlen(out) - 1);
        }
}

static const struct {
    kind k;
    const char *method, *path, *query, *body;
} requests[] = {
    {READ, "GET", "/artists", "id=eq.1", NULL},
    {READ, "HEAD", "/artists", "id=eq.1", NULL},
    {CREATE, "POST", "/artists", NULL, "{\"id\":900,\"name\":\"x\"}"},
    {UPDATE, "PATCH", "/artists", "id=eq.1", "{\"name\":\"y\"}"},
    {UPSERT, "PUT", "/artists", "id=eq.1", "{\"id\":1,\"name\":\"z\"}"},
    {DELETE, "DELETE", "/artists", "id=eq.900", NULL},
    {CALL, "GET", "/rpc/album_tracks", "album=1", NULL},
    {CALL, "POST", "/rpc/album_tracks", NULL, "{\"album\":1}"},
};

START_TEST(every_method_every_combination)
{
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "rollback-allow-override",
                          NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    size_t checked = 0;
    for (unsigned set = 0; set < (1u << N_PREFS); set++) {
        /* every single preference, every pair, and everything at once */
        unsigned bits = 0;
        for (unsigned b = set; b != 0; b &= b - 1)
            bits++;
        if (bits > 2 && set != (1u << N_PREFS) - 1)
            continue;
        char header[512], want[512];
        prefer(set, header, sizeof header);
        for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
            const char *h[] = {"Prefer", header, "Content-Type", "application/json", NULL};
            test_response r;
            harness_request(ctx, requests[i].method, requests[i].path, requests[i].query,
                            set ? h : h + 2, requests[i].body, &r);
            expected(requests[i].k, set, want, sizeof want);
            const char *got = harness_header(&r, "Preference-Applied");
            ck_assert_msg(r.status < 400, "%s %s [%s]: %d %s", requests[i].method,
                          requests[i].path, header, r.status, r.body);
            ck_assert_msg(want[0] == '\0' ? got == NULL : got != NULL && strcmp(got, want) == 0,
                          "%s %s [%s]: want [%s], got [%s]", requests[i].method,
                          requests[i].path, header, want, got ? got : "(none)");
            harness_free(&r);
            checked++;
        }
    }
    ck_assert_uint_gt(checked, 300);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("preference_applied");
    TCase *tc = tcase_create("preference_applied");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_method_every_combination);
    suite_add_tcase(s, tc);
    return check_run(s);
}
