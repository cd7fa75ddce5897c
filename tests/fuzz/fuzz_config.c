/* Fuzz target: the server's config file parser (server/config_file.c),
 * for what it accepts the PostgREST resolution and checks
 * (server/app_config.c: coercions, role-claim-key and URI parsers, base64)
 * with the --dump-config rendering, and the library's option parser
 * (pgrest_ctx_set).
 * Input: the config text; with a first byte of 'E', the remaining lines
 * are PGRST_* environment entries instead. */
#include "fuzz_common.h"

#include "app_config.h"
#include "config_dump.h"
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

/* app_config_read and the dump; "@file" values would read files (or
 * block on /dev/stdin), so they are replaced first. */
static void resolve(server_options *opts)
{
    for (size_t i = 0; i < opts->n; i++)
        if (opts->items[i].value[0] == '@')
            opts->items[i].value[0] = 'x';
    app_config cfg;
    char err[2048];
    if (app_config_read(opts, &cfg, err, sizeof err)) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (f != NULL) {
            config_dump(f, &cfg);
            fclose(f);
        }
        free(buf);
        server_options out = {0};
        app_config_to_options(&cfg, opts, &out);
        server_options_free(&out);
    } else if (memchr(err, '\0', sizeof err) == NULL || err[0] == '\0') {
        abort();
    }
    app_config_free(&cfg);
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
