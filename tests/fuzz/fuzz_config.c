/* Fuzz target: the server's config file parser (server/config_file.c),
 * for what it accepts the PostgREST resolution and checks
 * (pgrest_config_sources, lib/config/sources*.c: coercions, role-claim-key
 * and URI parsers, base64) with the --dump-config rendering, and the library's option parser
 * (pgrest_ctx_set).
 * Input: the config text; with a first byte of 'E', the remaining lines
 * are PGRST_* environment entries instead. */
#include "fuzz_common.h"

#include "config_file.h"

static void read_env(const char *text, server_options *opts)
{
    size_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    char *copy = strdup(text);
    char **env = calloc(n + 1, sizeof *env);
    if (copy == NULL || env == NULL)
        abort();
    size_t i = 0;
    for (char *line = copy; line != NULL && i < n; i++) {
        env[i] = line;
        line = strchr(line, '\n');
        if (line != NULL)
            *line++ = '\0';
    }
    config_read_env(opts, env);
    free(env);
    free(copy);
}

/* The resolution and the dump; "@file" values would read files (or
 * block on /dev/stdin), so they are replaced first. */
static void resolve(server_options *opts)
{
    pgrest_config_sources *s = pgrest_config_sources_new();
    if (s == NULL)
        abort();
    for (size_t i = 0; i < opts->n; i++) {
        if (opts->items[i].value[0] == '@')
            opts->items[i].value[0] = 'x';
        if (pgrest_config_sources_add(s, opts->items[i].key, opts->items[i].value,
                                      opts->items[i].kind) != PGREST_OK)
            abort();
    }
    char *message = NULL;
    int rc = pgrest_config_sources_resolve(s, &message);
    if (rc == PGREST_OK) {
        free(pgrest_config_sources_dump(s));
        const char *key, *value;
        for (size_t i = 0; pgrest_config_sources_option(s, i, &key, &value); i++)
            if (pgrest_config_sources_get(s, key) == NULL)
                abort();
    } else if (message == NULL || message[0] == '\0') {
        abort();
    }
    free(message);
    pgrest_config_sources_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    server_options opts = {0};
    char errbuf[256];
    bool ok = true;
    if (text[0] == 'E')
        read_env(text + 1, &opts);
    else
        ok = config_text_parse(text, &opts, errbuf, sizeof errbuf);
    if (!ok && memchr(errbuf, '\0', sizeof errbuf) == NULL)
        abort();
    resolve(&opts);
    pgrest_ctx *ctx = pgrest_ctx_new();
    if (ctx == NULL)
        abort();
    for (size_t i = 0; i < opts.n; i++) {
        pgrest_error err = {0};
        if (server_options_get(&opts, opts.items[i].key) == NULL)
            abort();
        if (pgrest_ctx_set(ctx, opts.items[i].key, opts.items[i].value, &err) != PGREST_OK &&
            err.message == NULL)
            abort();
    }
    pgrest_ctx_free(ctx);
    server_options_free(&opts);
    free(text);
    return 0;
}
