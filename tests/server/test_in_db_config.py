"""Which in-database settings PostgREST reads (Config/Database.hs
queryDbSettings, dbSettingsNames), seen through --dump-config against a
real database (CLI.hs: dump-config runs readInDbConfig when db-config is
on)."""
import os
import subprocess

from harness import SERVER, ServerTestCase


class InDbConfigDumpTest(ServerTestCase):
    START_SERVER = False

    def dump(self, **env):
        full = {k: v for k, v in os.environ.items() if not k.startswith("PGRST_")}
        full.update({"PGRST_DB_URI": self.cluster.db_uri, "PGRST_DB_CONFIG": "true"})
        full.update(env)
        r = subprocess.run([SERVER, "--dump-config"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60, env=full)
        self.assertEqual(r.returncode, 0, r.stderr)
        return dict(line.split(" = ", 1) for line in r.stdout.splitlines())

    def test_role_setting_is_read(self):
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.db_max_rows = '7'")
        self.assertEqual(self.dump()["db-max-rows"], "7")

    def test_database_only_setting_has_no_effect(self):
        # "A setting on the database only will have no effect" (Database.hs)
        self.cluster.psql("ALTER DATABASE pgrest_test SET pgrst.db_anon_role = 'xx'")
        self.assertEqual(self.dump()["db-anon-role"], '""')
        self.assertEqual(self.dump(PGRST_DB_ANON_ROLE="web_anon")["db-anon-role"],
                         '"web_anon"')

    def test_jwt_cache_max_entries_is_not_an_in_db_setting(self):
        # dbSettingsNames lists "jwt_cache_max_lifetime", not ..._entries
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.jwt_cache_max_entries = '5'")
        self.assertEqual(self.dump()["jwt-cache-max-entries"], "1000")
        self.assertEqual(self.dump(PGRST_JWT_CACHE_MAX_ENTRIES="9")["jwt-cache-max-entries"],
                         "9")

    def test_pre_config_sets_what_the_role_does_not(self):
        self.cluster.psql(
            "CREATE FUNCTION public.pre_config() RETURNS void LANGUAGE sql AS $$"
            " SELECT set_config('pgrst.db_schemas', 'api', true),"
            "        set_config('pgrst.db_max_rows', '3', true) $$;"
            "ALTER ROLE authenticator SET pgrst.db_max_rows = '8'")
        d = self.dump(PGRST_DB_PRE_CONFIG="public.pre_config")
        self.assertEqual(d["db-schemas"], '"api"')
        self.assertEqual(d["db-max-rows"], "8")     # the role's setting wins

    def test_db_uri_is_dumped_as_given(self):
        # fallback_application_name goes into the connection settings only
        # (Config.hs toConnectionSettings), not into configDbUri
        self.assertEqual(self.dump()["db-uri"], '"%s"' % self.cluster.db_uri)
