"""pgrest-server's command line and configuration handling, as PostgREST's
CLI.hs, Config.hs (+ Config/*.hs), Client.hs and docs/references/cli.rst,
configuration.rst define them. Expected texts come from those sources;
where a test needs PostgREST's own text (the --example file), it reads it
from the reference source when that is present."""
import base64
import os
import re
import socket
import subprocess
import tempfile
import unittest

import harness

SERVER = harness.SERVER
REFERENCE = os.environ.get(
    "POSTGREST_REFERENCE",
    os.path.join(harness.REPO, "..", "shared", "reference", "postgrest"))
if not os.path.isdir(REFERENCE):
    REFERENCE = "/work/shared/reference/postgrest"

# Config.hs toText over the parser defaults (no file, no environment):
# every option, `sort`ed as whole lines.
DEFAULT_DUMP = [
    'admin-server-host = "!4"',
    'admin-server-port = ""',
    'admin-server-unix-socket = ""',
    'admin-server-unix-socket-mode = "660"',
    'client-error-verbosity = "verbose"',
    'db-aggregates-enabled = false',
    'db-anon-role = ""',
    'db-channel = "pgrst"',
    'db-channel-enabled = true',
    'db-config = false',        # the tests turn the database lookup off
    'db-extra-search-path = "public"',
    'db-hoisted-tx-settings = "statement_timeout,plan_filter.statement_cost_limit,'
    'default_transaction_isolation"',
    'db-max-rows = ""',
    'db-plan-enabled = false',
    'db-pool = 10',
    'db-pool-acquisition-timeout = 10',
    'db-pool-automatic-recovery = true',
    'db-pool-max-idletime = 30',
    'db-pool-max-lifetime = 1800',
    'db-pre-config = ""',
    'db-pre-request = ""',
    'db-prepared-statements = true',
    'db-root-spec = ""',
    'db-schemas = "public"',
    'db-tx-end = "commit"',
    'db-uri = "postgresql://"',
    'jwt-aud = ""',
    'jwt-cache-max-entries = 1000',
    'jwt-role-claim-key = "$$.role"',
    'jwt-secret = ""',
    'jwt-secret-is-base64 = false',
    'log-level = "error"',
    'log-query = false',
    'openapi-mode = "follow-privileges"',
    'openapi-security-active = false',
    'openapi-server-proxy-uri = ""',
    'server-cors-allowed-origins = ""',
    'server-host = "!4"',
    'server-port = 3000',
    'server-reuseport = false',
    'server-timing-enabled = false',
    'server-trace-header = ""',
    'server-unix-socket = ""',
    'server-unix-socket-mode = "660"',
    'url-use-legacy-target-names = true',
]

SECRET = "reallyreallyreallyreallyverysafe"


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PGRST_")}
    # no database is reachable from these tests unless they start one
    env["PGRST_DB_CONFIG"] = "false"
    env.update(extra or {})
    return env


def pgrest(args, env=None, stdin=None, timeout=30):
    return subprocess.run([SERVER] + args, input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=clean_env(env))


class ConfigFile:
    def __init__(self, text):
        fd, self.path = tempfile.mkstemp(prefix="pgrest-cli-", suffix=".conf")
        with os.fdopen(fd, "w") as f:
            f.write(text)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        os.unlink(self.path)


def dump(env=None, text=None, stdin=None):
    """--dump-config as {key: rendered value}, asserting success."""
    if text is None:
        r = pgrest(["--dump-config"], env, stdin)
    else:
        with ConfigFile(text) as path:
            r = pgrest(["--dump-config", path], env, stdin)
    if r.returncode != 0:
        raise AssertionError("--dump-config failed (%d): %s" % (r.returncode, r.stderr))
    return dict(line.split(" = ", 1) for line in r.stdout.splitlines())


def example_from_reference():
    """Config.hs exampleConfigFile, read from PostgREST's source."""
    path = os.path.join(REFERENCE, "src", "library", "PostgREST", "Config.hs")
    if not os.path.exists(path):
        return None
    src = open(path, encoding="utf-8").read()
    body = src[src.index("exampleConfigFile = S.unlines"):]
    lines = re.findall(r'^\s*[\[,]\s*"((?:[^"\\]|\\.)*)"', body, re.M)
    return "".join(l.replace('\\"', '"') + "\n" for l in lines)


class HelpAndInfoTest(unittest.TestCase):
    """CLI.hs readCLIShowHelp: -h/-v/-e print on stdout and exit 0."""

    OPTIONS = [
        ("-h,--help", "Show this help text"),
        ("-v,--version", "Show the version information"),
        ("-e,--example", "Show an example configuration file"),
        ("--dump-config", "Dump loaded configuration and exit"),
        ("--dump-schema", "Dump loaded schema as JSON and exit (for debugging,"),
        ("--ready", "Checks the health of PostgREST by doing a request on"),
        ("FILENAME", "Path to configuration file"),
    ]

    def check_help(self, text):
        self.assertTrue(text.startswith("Usage: "), text)
        usage = text.split("\n\n")[0]
        for item in ["[-v|--version]", "[-e|--example]",
                     "[--dump-config | --dump-schema | --ready]", "[FILENAME]"]:
            self.assertIn(item, usage)
        self.assertIn("/ create a REST API to an existing Postgres", text)
        self.assertIn("\nAvailable options:\n", text)
        for names, help_text in self.OPTIONS:
            # optparse-applicative: names at column 2, help at column 27
            self.assertRegex(text, r"\n  %s +%s" % (re.escape(names), re.escape(help_text)))
            line = [l for l in text.splitlines() if l.startswith("  " + names)][0]
            self.assertEqual(line.index(help_text), 27, line)

    def test_help(self):
        for flag in ["--help", "-h"]:
            r = pgrest([flag])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, "")
            self.check_help(r.stdout)

    def test_help_wins_over_a_later_command(self):
        r = pgrest(["--help", "--dump-config"])
        self.assertEqual(r.returncode, 0)
        self.check_help(r.stdout)

    def test_version(self):
        for flag in ["--version", "-v"]:
            r = pgrest([flag])
            self.assertEqual(r.returncode, 0, r.stderr)
            # O.infoOption ("PostgREST " <> prettyVersion)
            self.assertRegex(r.stdout, r"^PostgREST \d+\.\d+.*\n$")
            self.assertEqual(len(r.stdout.splitlines()), 1)

    def test_version_does_not_read_the_config(self):
        r = pgrest(["-v", "/nonexistent/pgrest.conf"], {"PGRST_LOG_LEVEL": "nope"})
        self.assertEqual(r.returncode, 0)

    def test_example(self):
        expected = example_from_reference()
        for flag in ["--example", "-e"]:
            r = pgrest([flag])
            self.assertEqual(r.returncode, 0, r.stderr)
            if expected is None:
                self.assertIn('db-uri = "postgresql://"\n', r.stdout)
            else:
                # infoOption prints the unlines'd text plus a newline;
                # pgrest's own options follow PostgREST's text, commented
                # out so the file means what PostgREST's does
                self.assertTrue(r.stdout.startswith(expected), r.stdout)
                own = r.stdout[len(expected):]
                self.assertTrue(own.endswith("\n\n"), own)
                for line in own.splitlines():
                    self.assertTrue(line == "" or line.startswith("#"), line)
                for key in ("jwt-jwks-uri", "jwt-jwks-cafile", "jwt-jwks-min-refresh",
                            "jwt-jwks-timeout", "openapi-version"):
                    self.assertIn("\n# %s = " % key, own)

    def test_example_is_a_valid_config(self):
        r = pgrest(["-e"])
        with ConfigFile(r.stdout) as path:
            d = pgrest(["--dump-config", path], {"PGRST_DB_CONFIG": "false"})
        self.assertEqual(d.returncode, 0, d.stderr)
        self.assertIn('db-tx-end = "commit"', d.stdout)


class UsageErrorTest(unittest.TestCase):
    """showHelpOnError: the error, then the help, on stderr; exit 1."""

    def check_error(self, args, message):
        r = pgrest(args)
        self.assertEqual(r.returncode, 1, r)
        self.assertEqual(r.stdout, "")
        self.assertTrue(r.stderr.startswith(message + "\n\nUsage: "), r.stderr)
        self.assertIn("Available options:", r.stderr)

    def test_unknown_option(self):
        self.check_error(["--foo"], "Invalid option `--foo'")

    def test_unknown_short_option(self):
        self.check_error(["-x"], "Invalid option `-x'")

    def test_two_config_files(self):
        self.check_error(["a.conf", "b.conf"], "Invalid argument `b.conf'")

    def test_commands_are_alternatives(self):
        self.check_error(["--dump-config", "--dump-schema"], "Invalid option `--dump-schema'")
        self.check_error(["--ready", "--dump-config"], "Invalid option `--dump-config'")
        self.check_error(["--dump-config", "--dump-config"], "Invalid option `--dump-config'")

    def test_config_file_before_or_after_the_flag(self):
        with ConfigFile('db-schemas = "before_after"\n') as path:
            for args in (["--dump-config", path], [path, "--dump-config"]):
                r = pgrest(args)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn('db-schemas = "before_after"', r.stdout)


class DumpConfigTest(unittest.TestCase):
    """--dump-config: Config.hs toText of file + PGRST_* environment."""

    def test_defaults_in_order(self):
        r = pgrest(["--dump-config"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "\n".join(DEFAULT_DUMP) + "\n")

    def test_db_channel_uri_dumped_only_when_set(self):
        # pgrest's own option: absent from the default dump (PostgREST's),
        # shown in sort order once given, from the environment or a file
        self.assertNotIn("db-channel-uri", pgrest(["--dump-config"]).stdout)
        d = dump({"PGRST_DB_CHANNEL_URI": "postgresql://direct:5432/app"})
        self.assertEqual(d["db-channel-uri"], '"postgresql://direct:5432/app"')
        lines = pgrest(["--dump-config"], {"PGRST_DB_CHANNEL_URI": "x"}).stdout.splitlines()
        self.assertEqual(lines, sorted(lines))
        d = dump(text='db-channel-uri = "host=direct dbname=app"')
        self.assertEqual(d["db-channel-uri"], '"host=direct dbname=app"')

    def test_jwks_options_dumped_only_when_set(self):
        # pgrest's own (docs/operations.md): absent from PostgREST's dump
        self.assertNotIn("jwt-jwks", pgrest(["--dump-config"]).stdout)
        d = dump({"PGRST_JWT_JWKS_URI": "https://idp.example/.well-known/jwks.json",
                  "PGRST_JWT_JWKS_TIMEOUT": "5", "PGRST_JWT_JWKS_MIN_REFRESH": "60",
                  "PGRST_JWT_JWKS_CAFILE": "/etc/ca.pem"})
        self.assertEqual(d["jwt-jwks-uri"], '"https://idp.example/.well-known/jwks.json"')
        self.assertEqual(d["jwt-jwks-timeout"], "5")
        self.assertEqual(d["jwt-jwks-min-refresh"], "60")
        self.assertEqual(d["jwt-jwks-cafile"], '"/etc/ca.pem"')
        d = dump(text='jwt-jwks-uri = "http://127.0.0.1:8080/jwks"')
        self.assertEqual(d["jwt-jwks-uri"], '"http://127.0.0.1:8080/jwks"')

    def test_openapi_version_dumped_only_when_set(self):
        # pgrest's own (docs/openapi.md): absent from PostgREST's dump
        self.assertNotIn("openapi-version", pgrest(["--dump-config"]).stdout)
        self.assertEqual(dump({"PGRST_OPENAPI_VERSION": "3.1"})["openapi-version"], '"3.1"')
        self.assertEqual(dump(text='openapi-version = "2.0"')["openapi-version"], '"2.0"')
        r = pgrest(["--dump-config"], {"PGRST_OPENAPI_VERSION": "3"})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Invalid openapi-version: 2.0 or 3.1.", r.stderr + r.stdout)

    def test_lines_are_sorted_with_app_settings(self):
        out = pgrest(["--dump-config"], {"PGRST_APP_SETTINGS_zz": "1",
                                         "PGRST_APP_SETTINGS_Aa": "2"}).stdout
        lines = out.splitlines()
        self.assertEqual(lines, sorted(lines))
        self.assertIn('app.settings.Aa = "2"', lines)
        self.assertIn('app.settings.zz = "1"', lines)

    def test_file_values_and_rendering(self):
        d = dump(text='\n'.join([
            '# a comment',
            'db-uri = "postgres://u@h/db"',
            'db-anon-role = "we\\"ird"',
            'db-schemas = " a ,b,  c"',
            'db-extra-search-path = ""',
            'db-max-rows = 1000',
            'db-pool = "7"',
            'server-port = 3001  # trailing comment',
            'jwt-aud = "urn:example:aud"',
            'log-level = "info"',
            'server-cors-allowed-origins = "http://a.com, http://b.com"',
            'app.settings.name = "x$$y"',
            'server-unix-socket-mode = "600"',
        ]) + "\n")
        self.assertEqual(d["db-uri"], '"postgres://u@h/db"')
        self.assertEqual(d["db-anon-role"], '"we\\"ird"')      # q: " -> \"
        self.assertEqual(d["db-schemas"], '"a,b,c"')          # splitOnCommas, strip
        self.assertEqual(d["db-extra-search-path"], '""')     # emptyable
        self.assertEqual(d["db-max-rows"], "1000")
        self.assertEqual(d["db-pool"], "7")
        self.assertEqual(d["server-port"], "3001")
        self.assertEqual(d["jwt-aud"], '"urn:example:aud"')
        self.assertEqual(d["log-level"], '"info"')
        self.assertEqual(d["server-cors-allowed-origins"], '"http://a.com,http://b.com"')
        self.assertEqual(d["app.settings.name"], '"x$y"')     # $$ is a literal $
        self.assertEqual(d["server-unix-socket-mode"], '"600"')

    def test_environment_overrides_file(self):
        d = dump({"PGRST_DB_SCHEMAS": "from_env", "PGRST_DB_POOL": "3"},
                 'db-schemas = "from_file"\ndb-pool = 5\ndb-anon-role = "anon"\n')
        self.assertEqual(d["db-schemas"], '"from_env"')
        self.assertEqual(d["db-pool"], "3")
        self.assertEqual(d["db-anon-role"], '"anon"')

    def test_interpolation(self):
        d = dump({"MY_SECRET_SETTING": "s3cr3t"},
                 'app.settings.secret = "$(MY_SECRET_SETTING)"\n')
        self.assertEqual(d["app.settings.secret"], '"s3cr3t"')

    def test_aliases(self):
        """optWithAlias uses in Config.hs: the new name wins, the old one
        is read when the new one is unset."""
        d = dump(text='db-schema = "old_schema"\nmax-rows = 5\npre-request = "p.f"\n'
                      'root-spec = "r.s"\nrole-claim-key = ".x"\nsecret-is-base64 = true\n'
                      'jwt-secret = "%s"\n' % base64.b64encode(SECRET.encode()).decode())
        self.assertEqual(d["db-schemas"], '"old_schema"')
        self.assertEqual(d["db-max-rows"], "5")
        self.assertEqual(d["db-pre-request"], '"p.f"')
        self.assertEqual(d["db-root-spec"], '"r.s"')
        self.assertEqual(d["jwt-role-claim-key"], '".\\"x\\""')
        self.assertEqual(d["jwt-secret-is-base64"], "true")
        d = dump(text='db-schemas = "new"\ndb-schema = "old"\ndb-max-rows = 1\n'
                      'max-rows = 2\n')
        self.assertEqual(d["db-schemas"], '"new"')
        self.assertEqual(d["db-max-rows"], "1")

    def test_alias_environment_variables(self):
        d = dump({"PGRST_MAX_ROWS": "9", "PGRST_DB_SCHEMA": "env_old",
                  "PGRST_PRE_REQUEST": "a.b", "PGRST_ROOT_SPEC": "c.d"})
        self.assertEqual(d["db-max-rows"], "9")
        self.assertEqual(d["db-schemas"], '"env_old"')
        self.assertEqual(d["db-pre-request"], '"a.b"')
        self.assertEqual(d["db-root-spec"], '"c.d"')

    def test_db_pool_timeout_wins_over_max_idletime(self):
        # optWithAlias (optInt "db-pool-timeout") (optInt "db-pool-max-idletime")
        d = dump(text="db-pool-timeout = 11\ndb-pool-max-idletime = 22\n")
        self.assertEqual(d["db-pool-max-idletime"], "11")
        d = dump(text="db-pool-max-idletime = 22\n")
        self.assertEqual(d["db-pool-max-idletime"], "22")

    def test_admin_server_host_defaults_to_server_host(self):
        d = dump({"PGRST_SERVER_HOST": "127.0.0.1"})
        self.assertEqual(d["admin-server-host"], '"127.0.0.1"')
        d = dump({"PGRST_SERVER_HOST": "127.0.0.1", "PGRST_ADMIN_SERVER_HOST": "::1"})
        self.assertEqual(d["admin-server-host"], '"::1"')

    def test_booleans(self):
        """coerceBool: configurator bools; strings read as True/False in any
        case, else as an integer (> 0); anything else keeps the default."""
        cases = [("true", "true"), ("TRUE", "true"), ("False", "false"), ("1", "true"),
                 ("5", "true"), ("0", "false"), ("yes", "false"), ("on", "false")]
        for value, expected in cases:
            d = dump({"PGRST_DB_PLAN_ENABLED": value})
            self.assertEqual(d["db-plan-enabled"], expected, value)
        for value, expected in [("on", "true"), ("off", "false"), ("true", "true")]:
            d = dump(text="db-plan-enabled = %s\n" % value)
            self.assertEqual(d["db-plan-enabled"], expected, value)
        # a default of true kept when the value is not a boolean
        d = dump({"PGRST_DB_PREPARED_STATEMENTS": "nope"})
        self.assertEqual(d["db-prepared-statements"], "true")

    def test_integers(self):
        """coerceInt: numbers, strings read as integers; else the default."""
        for value, expected in [("20", "20"), (" 20 ", "20"), ("abc", "10"), ("2.5", "10")]:
            d = dump({"PGRST_DB_POOL": value})
            self.assertEqual(d["db-pool"], expected, value)
        self.assertEqual(dump({"PGRST_SERVER_PORT": "-1"})["server-port"], "-1")
        self.assertEqual(dump(text="db-pool = 2.5\n")["db-pool"], "10")
        self.assertEqual(dump(text='db-pool = "12"\n')["db-pool"], "12")

    def test_integers_read_as_haskell_reads_them(self):
        """coerceInt (C.String x) = readMaybe x: GHC.Read's readNumber takes
        balanced parentheses and a separate "-" lexeme around 0x/0o/decimal
        digits; no '+', exponent or fraction."""
        cases = [("(5)", "5"), ("((7))", "7"), (" ( 5 ) ", "5"), ("0x10", "16"),
                 ("0O17", "15"), ("+5", "10"), ("1e3", "10"), ("5 6", "10"), ("(5", "10"),
                 ("5)", "10"), ("()", "10")]
        for value, expected in cases:
            self.assertEqual(dump({"PGRST_DB_POOL": value})["db-pool"], expected, value)
        for value, expected in [("- 5", "-5"), ("(-5)", "-5"), ("( - 0x10 )", "-16"),
                                ("-(5)", "3000"), ("--5", "3000")]:
            self.assertEqual(dump({"PGRST_SERVER_PORT": value})["server-port"], expected, value)
        # coerceBool falls back to the same integer reading
        self.assertEqual(dump({"PGRST_DB_PLAN_ENABLED": "(1)"})["db-plan-enabled"], "true")

    def test_boolean_letters_and_numbers(self):
        """coerceBool: T.filter isAlpha, T.toTitle, read; else an Integer."""
        cases = [("t r u e", "true"), ("tRUE", "true"), ("tru3e", "true"), (" 1 ", "true"),
                 ("1.5", "false"), ("-1", "false"), ("+1", "false")]
        for value, expected in cases:
            d = dump({"PGRST_DB_PLAN_ENABLED": value})
            self.assertEqual(d["db-plan-enabled"], expected, value)

    def test_socket_mode_reads_an_octal_prefix(self):
        """parseSocketFileMode: readOct is a ReadS, so the octal digits at
        the start count and the rest is ignored; dumped with showOct."""
        for value, expected in [("0660", '"660"'), ("660abc", '"660"'), ("600 ", '"600"'),
                                ("777", '"777"')]:
            d = dump({"PGRST_SERVER_UNIX_SOCKET_MODE": value})
            self.assertEqual(d["server-unix-socket-mode"], expected, value)

    def test_qualified_identifiers_dump_as_toqi_reads_them(self):
        """toQi splits at the first '.' (T.breakOn); dumpQi leaves out an
        empty schema, and an empty name makes the schema the name."""
        cases = [("a.b", '"a.b"'), ("a.b.c", '"a.b.c"'), ("f", '"f"'), (".c", '"c"'),
                 ("a.", '"a"'), (".", '""'), ('"a b".c', '"\\"a b\\".c"')]
        for key in ["db-pre-request", "db-root-spec", "db-pre-config"]:
            env = "PGRST_" + key.upper().replace("-", "_")
            for value, expected in cases:
                self.assertEqual(dump({env: value})[key], expected, (key, value))

    def test_empty_string_is_unset(self):
        d = dump({"PGRST_DB_SCHEMAS": "", "PGRST_DB_ANON_ROLE": "", "PGRST_LOG_LEVEL": ""})
        self.assertEqual(d["db-schemas"], '"public"')
        self.assertEqual(d["log-level"], '"error"')

    def test_app_settings_from_env_keep_their_name(self):
        d = dump({"PGRST_APP_SETTINGS_My_Var": "v"}, 'app.settings.other = "o"\n')
        self.assertEqual(d["app.settings.My_Var"], '"v"')
        self.assertEqual(d["app.settings.other"], '"o"')

    def test_app_settings_from_env_in_place_and_quoted(self):
        """Config.hs parseAppSettings: every PGRST_APP_SETTINGS_<rest>
        becomes app.settings.<rest>, <rest> as written (case and
        underscores kept, even empty), the environment winning over the
        file (M.union fromEnv); toText quotes the value replacing only '"'
        with '\\"', and sorts its lines with the others'. A variable whose
        name is not "PGRST_" <> toUpper (dashToUnderscore key) sets no
        option (overrideFromDbOrEnvironment)."""
        env = {"PGRST_APP_SETTINGS_Jwt_Secret": 'say "hi" \\ $(HOME)',
               "PGRST_APP_SETTINGS_": "empty suffix",
               "PGRST_APP_SETTINGS_from_file": "env wins",
               "PGRST_APP_SETTINGS_a.b-c": "",
               "PGRST_db_schemas": "lower-case name",
               "PGRST_Log_Level": "info"}
        with ConfigFile('app.settings.from_file = "file"\napp.settings.other = 7\n') as path:
            r = pgrest(["--dump-config", path], env)
        self.assertEqual(r.returncode, 0, r.stderr)
        expected = sorted(DEFAULT_DUMP + [
            'app.settings.Jwt_Secret = "say \\"hi\\" \\ $(HOME)"',
            'app.settings. = "empty suffix"',
            'app.settings.from_file = "env wins"',
            'app.settings.a.b-c = ""',
            'app.settings.other = "7.0"',   # coerceText: show of a Scientific
        ])
        self.assertEqual(r.stdout, "\n".join(expected) + "\n")

    def test_role_claim_key_dumps(self):
        self.assertEqual(dump({"PGRST_JWT_ROLE_CLAIM_KEY": "$.postgrest.roles[1]"})
                         ["jwt-role-claim-key"], '"$$.postgrest.roles[1]"')
        # dumpDeprecatedJSPath: keys `show`n, indexes bare
        self.assertEqual(dump({"PGRST_JWT_ROLE_CLAIM_KEY": ".a.b[0]"})
                         ["jwt-role-claim-key"], '".\\"a\\".\\"b\\"[0]"')
        self.assertEqual(dump({"PGRST_JWT_ROLE_CLAIM_KEY": '.roles[?(@ ^== "adm")]'})
                         ["jwt-role-claim-key"], '".\\"roles\\"[?(@ ^== \\"adm\\")]"')

    def test_jwt_secret_from_file(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write(SECRET + "\n")          # one trailing newline is removed
        try:
            d = dump({"PGRST_JWT_SECRET": "@" + f.name})
            self.assertEqual(d["jwt-secret"], '"%s"' % SECRET)
            d = dump(text='jwt-secret = "@%s"\n' % f.name)
            self.assertEqual(d["jwt-secret"], '"%s"' % SECRET)
        finally:
            os.unlink(f.name)

    def test_jwt_secret_from_stdin(self):
        d = dump({"PGRST_JWT_SECRET": "@/dev/stdin"}, stdin=SECRET)
        self.assertEqual(d["jwt-secret"], '"%s"' % SECRET)

    def test_base64_secret_is_dumped_encoded(self):
        url_safe = base64.urlsafe_b64encode(b"\xfb" * 33).decode()
        d = dump({"PGRST_JWT_SECRET": url_safe, "PGRST_JWT_SECRET_IS_BASE64": "true"})
        self.assertEqual(d["jwt-secret"], '"%s"' % base64.b64encode(b"\xfb" * 33).decode())

    def test_jwk_secret_has_no_length_limit(self):
        jwk = '{"kty":"oct","k":"c2VjcmV0"}'
        d = dump({"PGRST_JWT_SECRET": jwk})
        self.assertEqual(d["jwt-secret"], '"%s"' % jwk.replace('"', '\\"'))

    def test_db_uri_from_file(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("  postgres://from@file/db \n\n")   # T.strip
        try:
            d = dump({"PGRST_DB_URI": "@" + f.name})
            self.assertEqual(d["db-uri"], '"postgres://from@file/db"')
        finally:
            os.unlink(f.name)

    def test_db_uri_from_stdin(self):
        d = dump({"PGRST_DB_URI": "@/dev/stdin"}, stdin="postgres://in@stdin/db\n")
        self.assertEqual(d["db-uri"], '"postgres://in@stdin/db"')

    def test_unquoted_and_quoted_numbers(self):
        d = dump(text='server-port = "3002"\nadmin-server-port = 3003\n')
        self.assertEqual(d["server-port"], "3002")
        self.assertEqual(d["admin-server-port"], "3003")


class ValidationTest(unittest.TestCase):
    """Every check of Config.hs: the message, exit status 1, nothing on
    stdout. PostgREST dies through `panic`, so the message appears inside
    GHC's `FatalError {fatalErrorMessage = "..."}` line on stderr."""

    def check_fails(self, env, message, text=None, args=("--dump-config",)):
        if text is None:
            r = pgrest(list(args), env)
        else:
            with ConfigFile(text) as path:
                r = pgrest(list(args) + [path], env)
        self.assertEqual(r.returncode, 1, r)
        self.assertEqual(r.stdout, "")
        self.assertIn("FatalError {fatalErrorMessage = ", r.stderr)
        self.assertIn(message, r.stderr)
        return r.stderr

    def test_short_jwt_secret(self):
        self.check_fails({"PGRST_JWT_SECRET": "short"},
                         "The JWT secret must be at least 32 characters long.")

    def test_short_base64_jwt_secret(self):
        self.check_fails({"PGRST_JWT_SECRET": base64.b64encode(b"x" * 31).decode(),
                          "PGRST_JWT_SECRET_IS_BASE64": "true"},
                         "The JWT secret must be at least 32 characters long.")

    def test_short_text_that_is_no_jwk(self):
        # parseSecret: JSON with a "kty" is a JWK only if jose parses it
        # (a known kty with its members); the library's rule, at start
        for text in ('{"kty":"XYZ"}', '{"kty":"RSA","n":"AQAB"}', '{"keys":[{"kty":"x"}]}'):
            self.check_fails({"PGRST_JWT_SECRET": text},
                             "The JWT secret must be at least 32 characters long.")

    def test_invalid_role_claim_key(self):
        def show(s):  # Haskell's show of a string, without the outer quotes
            return s.replace("\\", "\\\\").replace('"', '\\"')
        for key in [".role.", "role", "$.a[", ".a[?(@ == \"x\")].b", ".a[x]"]:
            # Parsec's error (source name shown once), `fail $ show e`,
            # then FatalError's show: the key is escaped three times
            self.check_fails({"PGRST_JWT_ROLE_CLAIM_KEY": key},
                             "failed to parse role-claim-key value (%s)"
                             % show(show(show(key))))

    def test_admin_port_same_as_server_port(self):
        self.check_fails({"PGRST_ADMIN_SERVER_PORT": "3000"},
                         "admin-server-port cannot be the same as server-port")
        self.check_fails({"PGRST_ADMIN_SERVER_PORT": "4000", "PGRST_SERVER_PORT": "4000"},
                         "admin-server-port cannot be the same as server-port")

    def test_log_level(self):
        self.check_fails({"PGRST_LOG_LEVEL": "verbose"},
                         "Invalid logging level. Check your configuration.")

    def test_openapi_mode(self):
        self.check_fails({"PGRST_OPENAPI_MODE": "other"},
                         "Invalid openapi-mode. Check your configuration.")

    def test_tx_end(self):
        self.check_fails({"PGRST_DB_TX_END": "abort"},
                         "Invalid transaction termination. Check your configuration.")

    def test_client_error_verbosity(self):
        self.check_fails({"PGRST_CLIENT_ERROR_VERBOSITY": "loud"},
                         "Invalid client-error-verbosity. Check your configuration.")

    def test_jwt_jwks_uri(self):
        # keys must not travel in clear: https, http only to this host
        for uri in ("http://idp.example/jwks", "ftp://idp.example/jwks",
                    "http://127.0.0.1@idp.example/jwks", "http://10.0.0.1/jwks"):
            self.check_fails({"PGRST_JWT_JWKS_URI": uri},
                             "jwt-jwks-uri must be https (http only to localhost)")
        self.check_fails({"PGRST_JWT_JWKS_URI": "not a uri"},
                         "jwt-jwks-uri is not a valid URI")
        # pgrest's numbers are checked by the library, as for its other
        # own options: the same exit, without Haskell's FatalError wording
        r = pgrest(["--dump-config"], {"PGRST_JWT_JWKS_URI": "https://idp.example/jwks",
                                       "PGRST_JWT_JWKS_TIMEOUT": "0"})
        self.assertEqual((r.returncode, r.stdout), (1, ""), r)
        self.assertIn("Invalid jwt-jwks-timeout: 0", r.stderr)

    def test_jwt_aud(self):
        self.check_fails({"PGRST_JWT_AUD": "http://a b"},
                         "jwt-aud should be a string or a valid URI")
        self.assertEqual(pgrest(["--dump-config"], {"PGRST_JWT_AUD": "plain aud"}).returncode, 0)

    def test_proxy_uri(self):
        for uri in ["ftp://x.com", "https://u@x.com", "https://x.com?a=1", "x.com",
                    "https://x.com:70000", "https://x.com#f"]:
            self.check_fails({"PGRST_OPENAPI_SERVER_PROXY_URI": uri},
                             "Malformed proxy uri, a correct example: "
                             "https://example.com:8443/basePath")
        ok = pgrest(["--dump-config"],
                    {"PGRST_OPENAPI_SERVER_PROXY_URI": "https://example.com:8443/basePath"})
        self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_db_schemas(self):
        self.check_fails({"PGRST_DB_SCHEMAS": "api, pg_catalog"},
                         "db-schemas does not allow schema: 'pg_catalog'")
        self.check_fails({"PGRST_DB_SCHEMAS": "information_schema"},
                         "db-schemas does not allow schema: 'information_schema'")

    def test_socket_modes(self):
        for key in ["server-unix-socket-mode", "admin-server-unix-socket-mode"]:
            env = "PGRST_" + key.upper().replace("-", "_")
            self.check_fails({env: "abc"}, "Invalid %s: not an octal" % key)
            self.check_fails({env: "500"}, "Invalid %s: needs to be between 600 and 777" % key)
            self.check_fails({env: "1000"}, "Invalid %s: needs to be between 600 and 777" % key)

    def test_socket_mode_prefix_errors(self):
        # readOct does not skip white space; "0o660" reads as octal 0
        env = "PGRST_SERVER_UNIX_SOCKET_MODE"
        self.check_fails({env: " 660"}, "Invalid server-unix-socket-mode: not an octal")
        self.check_fails({env: "-660"}, "Invalid server-unix-socket-mode: not an octal")
        self.check_fails({env: "0o660"},
                         "Invalid server-unix-socket-mode: needs to be between 600 and 777")

    def test_missing_secret_file(self):
        self.check_fails({"PGRST_JWT_SECRET": "@/nonexistent/secret"},
                         "/nonexistent/secret: openBinaryFile: does not exist")

    def test_missing_db_uri_file(self):
        self.check_fails({"PGRST_DB_URI": "@/nonexistent/uri"},
                         "/nonexistent/uri: openFile: does not exist")

    def test_missing_config_file(self):
        self.check_fails({}, "Error in config /nonexistent/pgrest.conf", None,
                         ["--dump-config", "/nonexistent/pgrest.conf"])

    def test_config_errors_stop_a_normal_start(self):
        r = pgrest([], {"PGRST_LOG_LEVEL": "nope", "PGRST_SERVER_PORT": "0"}, timeout=20)
        self.assertEqual(r.returncode, 1)
        self.assertIn("Invalid logging level. Check your configuration.", r.stderr)

    def test_invalid_server_threads_stops_a_normal_start(self):
        # pgrest's own server-* numbers are refused, not read as 0
        r = pgrest([], {"PGRST_SERVER_THREADS": "many", "PGRST_SERVER_PORT": "0"}, timeout=20)
        self.assertEqual(r.returncode, 1)
        self.assertIn("invalid server-threads: many (expected 1..1024)", r.stderr)

    def test_error_from_the_file(self):
        self.check_fails({}, "Invalid openapi-mode. Check your configuration.",
                         'openapi-mode = "nope"\n')


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class ReadyWithoutServerTest(unittest.TestCase):
    """Client.hs ready: the errors that need no running server."""

    def test_no_admin_port(self):
        r = pgrest(["--ready"])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "ERROR: Admin server is not running. "
                                   "Please check admin-server-port config.\n")

    def test_special_host(self):
        r = pgrest(["--ready"], {"PGRST_ADMIN_SERVER_PORT": "3001"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, 'ERROR: The `--ready` flag cannot be used when server-host '
                                   'is configured as "!4". Please update your server-host '
                                   'config to "localhost".\n')

    def test_connection_refused(self):
        port = free_port()
        r = pgrest(["--ready"], {"PGRST_ADMIN_SERVER_PORT": str(port),
                                 "PGRST_SERVER_HOST": "localhost"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "ERROR: connection refused to http://localhost:%d/ready\n"
                         % port)

    # Client.hs handleHttpException: http-client's parseRequest throws
    # InvalidUrlException for a URL it cannot parse ("invalid url - "),
    # apart from a request that fails ("connection refused to ").
    def test_negative_port_is_an_invalid_url(self):
        # show (-1) makes "localhost:-1", which RFC 3986's port (*DIGIT)
        # cannot read: parseURI fails.
        r = pgrest(["--ready"], {"PGRST_ADMIN_SERVER_PORT": "-1",
                                 "PGRST_SERVER_HOST": "localhost"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, "ERROR: invalid url - http://localhost:-1/ready\n")

    def test_host_that_is_no_ipv6_literal_is_an_invalid_url(self):
        # wrapIfIpv6 brackets any host with a ':'; "[foo:bar]" is no IP-literal
        r = pgrest(["--ready"], {"PGRST_ADMIN_SERVER_PORT": "3001",
                                 "PGRST_ADMIN_SERVER_HOST": "foo:bar"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "ERROR: invalid url - http://[foo:bar]:3001/ready\n")

    def test_host_with_a_bracket_is_an_invalid_url(self):
        r = pgrest(["--ready"], {"PGRST_ADMIN_SERVER_PORT": "3001",
                                 "PGRST_ADMIN_SERVER_HOST": "a[b"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "ERROR: invalid url - http://a[b:3001/ready\n")

    def test_ipv6_connection_refused(self):
        port = free_port()
        r = pgrest(["--ready"], {"PGRST_ADMIN_SERVER_PORT": str(port),
                                 "PGRST_ADMIN_SERVER_HOST": "::1"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "ERROR: connection refused to http://[::1]:%d/ready\n"
                         % port)

    def test_refused_on_port_80_shows_http_clients_uri(self):
        # the refused message is show (getUri req), which leaves out
        # http's default port; the URL built keeps it
        s = socket.socket()
        try:
            s.connect(("127.0.0.1", 80))
            self.skipTest("something listens on port 80")
        except OSError:
            pass
        finally:
            s.close()
        r = pgrest(["--ready"], {"PGRST_ADMIN_SERVER_PORT": "80",
                                 "PGRST_ADMIN_SERVER_HOST": "127.0.0.1"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "ERROR: connection refused to http://127.0.0.1/ready\n")


class DeprecationWarningTest(unittest.TestCase):
    """Logger.hs DeprecatedJSPathSyntaxObs, logged at startup."""

    def test_legacy_role_claim_key_warns(self):
        port = free_port()
        p = subprocess.Popen([SERVER], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=clean_env({
                                 "PGRST_JWT_ROLE_CLAIM_KEY": ".role",
                                 "PGRST_SERVER_PORT": str(port),
                                 "PGRST_SERVER_HOST": "127.0.0.1",
                                 "PGRST_DB_URI": "postgresql://nobody@127.0.0.1:1/none"}))
        try:
            # App.run logs it right after AppState.init's AppStartObs
            first = p.stderr.readline()
            line = p.stderr.readline()
            line2 = p.stderr.readline()
        finally:
            p.terminate()
            p.communicate(timeout=20)
        self.assertRegex(first, r": Starting PostgREST .*\.\.\.$")
        self.assertRegex(line, r"^\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}: WARNING: The config "
                               r'`jwt-role-claim-key=\."role"` is using the deprecated JSPath '
                               r"syntax\.$")
        self.assertIn('Update `jwt-role-claim-key=."role"` to the new JSONPath syntax', line2)
