/* Fuzz target: PostgREST's configuration sources as the library reads
 * them (lib/config/sources_file.c: the configurator file syntax, PGRST_*
 * variables), for what it accepts the resolution and checks
 * (lib/config/sources_read.c: coercions, role-claim-key and URI parsers,
 * base64) with the --dump-config rendering, and the library's option
 * parser (pgrest_ctx_set) over the resolved options.
 * Input: the config text; with a first byte of 'E', the remaining lines
 * are PGRST_* environment entries instead. "@file" values would read
 * files (or block on /dev/stdin): every '@' is read as 'x'. */
#include "fuzz_common.h"

static void add_env(pgrest_config_sources *s, char *text)
{
    size_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    char **env = calloc(n + 1, sizeof *env);
    if (env == NULL)
        abort();
    size_t i = 0;
    for (char *line = text; line != NULL && i < n; i++) {
        env[i] = line;
        line = strchr(line, '\n');
        if (line != NULL)
            *line++ = '\0';
    }
    if (pgrest_config_sources_add_environment(s, env) != PGREST_OK)
        abort();
    free(env);
}

/* The resolved options, each as the context reads it. */
static void set_on_a_context(const pgrest_config_sources *s)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    if (ctx == NULL)
        abort();
    const char *key, *value;
    for (size_t i = 0; pgrest_config_sources_option(s, i, &key, &value); i++) {
        pgrest_error err = {0};
        if (pgrest_config_sources_get(s, key) == NULL)
            abort();
        if (pgrest_ctx_set(ctx, key, value, &err) != PGREST_OK && err.message == NULL)
            abort();
    }
    pgrest_ctx_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    for (char *p = text; (p = strchr(p, '@')) != NULL;)
        *p = 'x';
    pgrest_config_sources *s = pgrest_config_sources_new();
    if (s == NULL)
        abort();
    char *message = NULL;
    if (text[0] == 'E')
        add_env(s, text + 1);
    else if (pgrest_config_sources_add_text(s, text, &message) == PGREST_ERR_CONFIG &&
             (message == NULL || strncmp(message, "Error in config ", 16) != 0))
        abort();
    free(message);
    message = NULL;
    int rc = pgrest_config_sources_resolve(s, &message);
    if (rc == PGREST_OK) {
        free(pgrest_config_sources_dump(s));
        set_on_a_context(s);
    } else if (message == NULL || message[0] == '\0') {
        abort();
    }
    free(message);
    pgrest_config_sources_free(s);
    free(text);
    return 0;
}
