/* PostgREST's command line (CLI.hs readCLIShowHelp, optparse-applicative):
 *   [-h|--help] [-v|--version] [-e|--example]
 *   [--dump-config | --dump-schema | --ready] [FILENAME]
 * Arguments are read left to right; -h, -v and -e print and exit 0 as
 * soon as they are seen; an unknown or repeated option, or a second
 * FILENAME, prints the error and the help on stderr and exits 1. */
#ifndef PGRS_CLI_H
#define PGRS_CLI_H

typedef enum cli_command {
    CLI_RUN,
    CLI_DUMP_CONFIG,
    CLI_DUMP_SCHEMA,
    CLI_READY,
} cli_command;

typedef struct cli_args {
    cli_command command;
    const char *config_path;   /* NULL: configuration from the environment */
    const char *prog;          /* program name, for messages */
} cli_args;

/* Returns -1 when the program should go on with *out, otherwise the exit
 * status after printing what was asked (help, version, example, error). */
int cli_parse(int argc, char **argv, cli_args *out);

/* PostgREST's `--example` file (Config.hs exampleConfigFile). */
extern const char cli_example_config[];

#endif
