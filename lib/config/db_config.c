#include "config/db_config.h"

#include <string.h>
#include <strings.h>

#include "config/config_coerce.h"
#include "config/config_snapshot.h"
#include "sql/sql_builder.h"
#include "util/error.h"

/* Role settings first (database-specific winning), then -- only when a
 * pre-config function ran ($2) -- what the session holds after it for the
 * keys the role does not set. Without pre-config, queryDbSettings reads
 * pg_db_role_setting alone: pgrst.* set by ALTER DATABASE, postgresql.conf
 * or the connection's options have no effect. */
static const char *const settings_query =
    "WITH role_setting AS ("
    "  SELECT setdatabase AS database, unnest(setconfig) AS setting"
    "  FROM pg_catalog.pg_db_role_setting"
    "  WHERE setrole = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = CURRENT_USER)"
    "    AND setdatabase IN (0, (SELECT oid FROM pg_catalog.pg_database"
    "                            WHERE datname = CURRENT_CATALOG))),"
    " kv AS ("
    "  SELECT database, substr(setting, 1, strpos(setting, '=') - 1) AS k,"
    "         substr(setting, strpos(setting, '=') + 1) AS v FROM role_setting),"
    " from_role AS ("
    "  SELECT DISTINCT ON (k) substr(k, 7) AS key, v AS value FROM kv"
    "  WHERE k LIKE 'pgrst.%' AND substr(k, 7) = ANY($1::text[])"
    "  ORDER BY k, database DESC),"
    " from_session AS ("
    "  SELECT key, current_setting('pgrst.' || key, true) AS value"
    "  FROM unnest($1::text[]) AS key)"
    " SELECT key, value FROM from_role"
    " UNION ALL"
    " SELECT key, value FROM from_session"
    " WHERE $2::boolean AND value IS NOT NULL AND value <> ''"
    "   AND key NOT IN (SELECT key FROM from_role)";

int pgr_db_query_error(pgrest_arena *a, PGconn *pg, const PGresult *r, pgrest_error *err)
{
    const char *code = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *detail = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL) : NULL;
    const char *hint = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_HINT) : NULL;
    pgr_error(err, 503, pgr_strdup(a, code ? code : "PGRST001"),
              pgr_strdup(a, msg ? msg : PQerrorMessage(pg)),
              detail ? pgr_strdup(a, detail) : NULL, hint ? pgr_strdup(a, hint) : NULL);
    return PGREST_ERR_CONNECTION;
}

static int call_pre_config(PGconn *pg, const char *fn, pgrest_arena *a, pgrest_error *err)
{
    if (fn == NULL)
        return PGREST_OK;
    pgr_sql q;
    pgr_sql_init(&q, a);
    pgr_sql_put(&q, "SELECT ");
    pgr_sql_qualified_text(&q, fn);
    pgr_sql_put(&q, "()");
    PGresult *r = PQexec(pg, pgr_sb_finish(&q.sb));
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK ? PGREST_OK : pgr_db_query_error(a, pg, r, err);
    PQclear(r);
    return rc;
}

/* A setting is text (C.String) read as Config.hs reads it: a number or a
 * boolean it cannot read is Nothing, the option's default -- not an
 * error, and not the file's value either (the database's key wins). ""
 * is how a layer says "the default". */
static const char *coerced(pgrest_arena *a, const pgrest_option_info *o, const char *value)
{
    long long n;
    bool b;
    if (o->type == PGREST_OPTION_INT)
        return pgr_coerce_int_text(value, &n) ? pgr_asprintf(a, "%lld", n) : "";
    if (o->type == PGREST_OPTION_BOOL)
        return pgr_coerce_bool_text(value, &b) ? (b ? "true" : "false") : "";
    return value;
}

/* The option a row of the settings query names: pgrst.<in_database>. */
static const pgrest_option_info *in_database(const char *key)
{
    const pgrest_option_info *o;
    for (size_t i = 0; (o = pgrest_option_at(i)) != NULL; i++)
        if (o->in_database != NULL && strcmp(o->in_database, key) == 0)
            return o;
    return NULL;
}

/* The options PostgREST reads from the database (Config/Database.hs
 * dbSettingsNames), as a text[] literal of their in-database names. */
static const char *in_database_names(pgrest_arena *a)
{
    const pgrest_option_info *o;
    size_t n = 0;
    for (size_t i = 0; pgrest_option_at(i) != NULL; i++)
        n++;
    const char **names = PGR_NEW_ARRAY(a, const char *, n + 1);
    if (names == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; (o = pgrest_option_at(i)) != NULL; i++)
        if (o->in_database != NULL)
            names[k++] = o->in_database;
    return pgr_pg_array_literal(a, names, k);
}

static int collect(pgrest_arena *a, const PGresult *r, pgr_kv **out, pgrest_error *err)
{
    pgr_kv *list = NULL;
    for (int i = 0; i < PQntuples(r); i++) {
        const pgrest_option_info *o = in_database(PQgetvalue(r, i, 0));
        if (o == NULL)
            continue;
        const char *value = coerced(a, o, PQgetvalue(r, i, 1));
        list = value ? pgr_kv_with(a, list, o->name, value) : NULL;
        if (list == NULL)
            return pgr_error_oom(err);
    }
    *out = list;
    return PGREST_OK;
}

int pgr_read_db_settings(PGconn *pg, const char *pre_config, pgrest_arena *a,
                         pgr_kv **out, pgrest_error *err)
{
    *out = NULL;
    /* one transaction, so pre-config's local settings are still visible */
    PGresult *r = PQexec(pg, "BEGIN READ ONLY");
    PQclear(r);
    int rc = call_pre_config(pg, pre_config, a, err);
    const char *keys = rc == PGREST_OK ? in_database_names(a) : NULL;
    if (rc == PGREST_OK && keys == NULL)
        rc = pgr_error_oom(err);
    if (rc == PGREST_OK) {
        const char *params[2] = {keys, pre_config != NULL ? "true" : "false"};
        r = PQexecParams(pg, settings_query, 2, NULL, params, NULL, NULL, 0);
        rc = PQresultStatus(r) == PGRES_TUPLES_OK ? collect(a, r, out, err)
                                                  : pgr_db_query_error(a, pg, r, err);
        PQclear(r);
    }
    r = PQexec(pg, rc == PGREST_OK ? "COMMIT" : "ROLLBACK");
    PQclear(r);
    return rc;
}
