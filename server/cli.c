#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "version.h"

const char cli_example_config[] =
    "## Admin server used for checks. It's disabled by default unless a port is specified.\n"
    "# admin-server-port = 3001\n"
    "\n"
    "# PostgREST error json verbosity config\n"
    "# client-error-verbosity = \"verbose\"\n"
    "\n"
    "## The database role to use when no client authentication is provided\n"
    "# db-anon-role = \"anon\"\n"
    "\n"
    "## Notification channel for reloading the schema cache\n"
    "db-channel = \"pgrst\"\n"
    "\n"
    "## Enable or disable the notification channel\n"
    "db-channel-enabled = true\n"
    "\n"
    "## Enable in-database configuration\n"
    "db-config = true\n"
    "\n"
    "## Function for in-database configuration\n"
    "## db-pre-config = \"postgrest.pre_config\"\n"
    "\n"
    "## Extra schemas to add to the search_path of every request\n"
    "db-extra-search-path = \"public\"\n"
    "\n"
    "## Limit rows in response\n"
    "# db-max-rows = 1000\n"
    "\n"
    "## Allow getting the EXPLAIN plan through the `Accept: application/vnd.pgrst.plan` header\n"
    "# db-plan-enabled = false\n"
    "\n"
    "## Number of open connections in the pool\n"
    "db-pool = 10\n"
    "\n"
    "## Time in seconds to wait to acquire a slot from the connection pool\n"
    "# db-pool-acquisition-timeout = 10\n"
    "\n"
    "## Time in seconds after which to recycle pool connections\n"
    "# db-pool-max-lifetime = 1800\n"
    "\n"
    "## Time in seconds after which to recycle unused pool connections\n"
    "# db-pool-max-idletime = 30\n"
    "\n"
    "## Allow automatic database connection retrying\n"
    "# db-pool-automatic-recovery = true\n"
    "\n"
    "## Stored proc to exec immediately after auth\n"
    "# db-pre-request = \"stored_proc_name\"\n"
    "\n"
    "## Enable or disable prepared statements. disabling is only necessary when behind a connection pooler.\n"
    "## When disabled, statements will be parametrized but won't be prepared.\n"
    "db-prepared-statements = true\n"
    "\n"
    "## The name of which database schema to expose to REST clients\n"
    "db-schemas = \"public\"\n"
    "\n"
    "## How to terminate database transactions\n"
    "## Possible values are:\n"
    "## commit (default)\n"
    "##   Transaction is always committed, this can not be overridden\n"
    "## commit-allow-override\n"
    "##   Transaction is committed, but can be overridden with Prefer tx=rollback header\n"
    "## rollback\n"
    "##   Transaction is always rolled back, this can not be overridden\n"
    "## rollback-allow-override\n"
    "##   Transaction is rolled back, but can be overridden with Prefer tx=commit header\n"
    "db-tx-end = \"commit\"\n"
    "\n"
    "## The standard connection URI format, documented at\n"
    "## https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING\n"
    "db-uri = \"postgresql://\"\n"
    "\n"
    "# jwt-aud = \"your_audience_claim\"\n"
    "\n"
    "## Jspath to the role claim key\n"
    "jwt-role-claim-key = \".role\"\n"
    "\n"
    "## Choose a secret, JSON Web Key (or set) to enable JWT auth\n"
    "## (use \"@filename\" to load from separate file)\n"
    "# jwt-secret = \"secret_with_at_least_32_characters\"\n"
    "jwt-secret-is-base64 = false\n"
    "\n"
    "## Enables JWT Cache and sets its max size, disables caching with 0\n"
    "# jwt-cache-max-entries = 0\n"
    "\n"
    "## Logging level, the admitted values are: crit, error, warn, info and debug.\n"
    "log-level = \"error\"\n"
    "\n"
    "## Log the SQL query at the current log-level.\n"
    "log-query = false\n"
    "\n"
    "## Determine if the OpenAPI output should follow or ignore role privileges or be disabled entirely.\n"
    "## Admitted values: follow-privileges, ignore-privileges, disabled\n"
    "openapi-mode = \"follow-privileges\"\n"
    "\n"
    "## Base url for the OpenAPI output\n"
    "openapi-server-proxy-uri = \"\"\n"
    "\n"
    "## Configurable CORS origins\n"
    "# server-cors-allowed-origins = \"\"\n"
    "\n"
    "server-host = \"!4\"\n"
    "server-port = 3000\n"
    "server-reuseport = false\n"
    "\n"
    "## Allow getting the request-response timing information through the `Server-Timing` header\n"
    "server-timing-enabled = false\n"
    "\n"
    "## Unix socket location\n"
    "## if specified it takes precedence over server-port\n"
    "# server-unix-socket = \"/tmp/pgrst.sock\"\n"
    "\n"
    "## Unix socket file mode\n"
    "## When none is provided, 660 is applied by default\n"
    "# server-unix-socket-mode = \"660\"\n"
    "\n"
    "## Use legacy target names in relationship filters\n"
    "## If active, allows using the target name of the relationship in filters even if it has an alias.\n"
    "## Otherwise it only allows the alias in filters\n"
    "url-use-legacy-target-names = true\n"
    /* pgrest's own options after PostgREST's text, all commented out, so
     * the file still configures what PostgREST's does (docs/operations.md) */
    "\n"
    "## pgrest: signing keys from a JSON Web Key Set URL, next to jwt-secret\n"
    "## (https; http only to localhost). Fetched at start, when its Cache-Control\n"
    "## max-age runs out, and for a token whose kid no key has\n"
    "# jwt-jwks-uri = \"https://example.com/.well-known/jwks.json\"\n"
    "\n"
    "## PEM file of the CA certificates to check the JWKS server with,\n"
    "## instead of the system's\n"
    "# jwt-jwks-cafile = \"/etc/ssl/certs/my-ca.pem\"\n"
    "\n"
    "## Seconds between two fetches asked for by unknown kids, at least\n"
    "# jwt-jwks-min-refresh = 30\n"
    "\n"
    "## Seconds a request waits for a fetch, at most\n"
    "# jwt-jwks-timeout = 2\n"
    "\n"
    "## pgrest: the document GET / answers when Accept names no version:\n"
    "## PostgREST's Swagger 2.0, or OpenAPI 3.1. Admitted values: 2.0, 3.1\n"
    "# openapi-version = \"2.0\"\n"
    ;

#define HELP_WIDTH 80
#define DESC_COLUMN 27

/* Words of text filled into lines of HELP_WIDTH, each new line indented
 * by indent (optparse-applicative's paragraph layout); col is where the
 * first word starts. */
static void fill(FILE *out, const char *text, int col, int indent)
{
    const char *p = text;
    bool first = true;
    while (*p) {
        while (*p == ' ')
            p++;
        int len = (int)strcspn(p, " ");
        if (len == 0)
            break;
        if (!first && col + 1 + len > HELP_WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", len, p);
        col += len;
        p += len;
        first = false;
    }
    fputc('\n', out);
}

static void usage(FILE *out, const char *prog)
{
    static const char *const items[] = {"[-v|--version]", "[-e|--example]",
                                        "[--dump-config | --dump-schema | --ready]",
                                        "[FILENAME]"};
    int indent = (int)(strlen("Usage: ") + strlen(prog) + 1);
    int col = fprintf(out, "Usage: %s", prog);
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        int len = (int)strlen(items[i]);
        if (col + 1 + len > HELP_WIDTH) {
            fprintf(out, "\n%*s%s", indent, "", items[i]);
            col = indent + len;
        } else
            col += fprintf(out, " %s", items[i]);
    }
    fputc('\n', out);
}

static void option_line(FILE *out, const char *names, const char *help)
{
    int col = fprintf(out, "  %s", names);
    if (col + 1 > DESC_COLUMN) {
        fprintf(out, "\n%*s", DESC_COLUMN, "");
    } else
        fprintf(out, "%*s", DESC_COLUMN - col, "");
    fill(out, help, DESC_COLUMN, DESC_COLUMN);
}

static void help(FILE *out, const char *prog)
{
    usage(out, prog);
    fputs("\n  ", out);
    fill(out, "PostgREST " PGRS_PRETTY_VERSION
              " / create a REST API to an existing Postgres database", 2, 2);
    fputs("\nAvailable options:\n", out);
    option_line(out, "-h,--help", "Show this help text");
    option_line(out, "-v,--version", "Show the version information");
    option_line(out, "-e,--example", "Show an example configuration file");
    option_line(out, "--dump-config", "Dump loaded configuration and exit");
    option_line(out, "--dump-schema",
                "Dump loaded schema as JSON and exit (for debugging, output structure is "
                "unstable)");
    option_line(out, "--ready",
                "Checks the health of PostgREST by doing a request on the admin server "
                "/ready endpoint");
    option_line(out, "FILENAME", "Path to configuration file");
}

/* showHelpOnError: the error, then the whole help, on stderr; exit 1. */
static int parse_error(const char *prog, const char *fmt, const char *arg)
{
    fprintf(stderr, fmt, arg);
    fputs("\n\n", stderr);
    help(stderr, prog);
    return 1;
}

/* An info option (infoOption): printed on stdout, exit 0. */
static int info(const char *text)
{
    fputs(text, stdout);
    fputc('\n', stdout);
    return 0;
}

static int long_option(const char *arg, cli_args *out, bool *command_set)
{
    static const struct { const char *name; cli_command command; } commands[] = {
        {"--dump-config", CLI_DUMP_CONFIG},
        {"--dump-schema", CLI_DUMP_SCHEMA},
        {"--ready", CLI_READY},
    };
    if (strcmp(arg, "--help") == 0) {
        help(stdout, out->prog);
        return 0;
    }
    if (strcmp(arg, "--version") == 0)
        return info("PostgREST " PGRS_PRETTY_VERSION);
    if (strcmp(arg, "--example") == 0)
        return info(cli_example_config);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(arg, commands[i].name) == 0 && !*command_set) {
            /* the three are alternatives: one of them, once */
            out->command = commands[i].command;
            *command_set = true;
            return -1;
        }
    return parse_error(out->prog, "Invalid option `%s'", arg);
}

/* -h, -v, -e, possibly bundled (-ve): the first one decides. */
static int short_options(const char *arg, cli_args *out)
{
    for (const char *p = arg + 1; *p; p++) {
        if (*p == 'h') {
            help(stdout, out->prog);
            return 0;
        }
        if (*p == 'v')
            return info("PostgREST " PGRS_PRETTY_VERSION);
        if (*p == 'e')
            return info(cli_example_config);
        char opt[3] = {'-', *p, '\0'};
        return parse_error(out->prog, "Invalid option `%s'", opt);
    }
    return -1;
}

int cli_parse(int argc, char **argv, cli_args *out)
{
    const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    out->prog = argc > 0 ? (slash ? slash + 1 : argv[0]) : "pgrest-server";
    out->command = CLI_RUN;
    out->config_path = NULL;
    bool command_set = false, only_positional = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int rc = -1;
        if (!only_positional && strcmp(arg, "--") == 0)
            only_positional = true;
        else if (!only_positional && strncmp(arg, "--", 2) == 0)
            rc = long_option(arg, out, &command_set);
        else if (!only_positional && arg[0] == '-' && arg[1] != '\0')
            rc = short_options(arg, out);
        else if (out->config_path == NULL)
            out->config_path = arg;
        else
            rc = parse_error(out->prog, "Invalid argument `%s'", arg);
        if (rc >= 0)
            return rc;
    }
    return -1;
}
