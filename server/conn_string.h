/* Options PostgREST adds to db-uri before connecting (Config.hs
 * addConnStringOption): fallback_application_name, so pg_stat_activity
 * names the server and its version. */
#ifndef PGRS_CONN_STRING_H
#define PGRS_CONN_STRING_H

/* db_uri with "key=value" appended the way libpq reads it: a URI gets
 * "?key=value" or "&key=value" (value percent-encoded), a key/value string
 * gets " key='value'", anything else is returned unchanged. A malloc'ed
 * string, NULL when out of memory. */
char *conn_string_add_option(const char *db_uri, const char *key, const char *value);

/* conn_string_add_option(db_uri, "fallback_application_name", "PostgREST <version>") */
char *conn_string_with_app_name(const char *db_uri);

#endif
