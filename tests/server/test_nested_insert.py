"""Nested inserts through one-to-many relationships (pgrest's extension,
docs/nested-inserts.md; issue 32): a POST body key that names a
relationship embeddable from the target holds related rows, written in the
request's one statement. Every test compares the database afterwards with
what the response says. PostgREST answers these bodies PGRST204 (a key
that is not a column, Plan.hs resolveOrError); bodies it accepts keep its
answer (the conformance suite)."""
import json
import threading
import time

from harness import ServerTestCase, log
from test_admin_logs import JWT_SECRET, jwt

USER = {"Authorization": "Bearer " + jwt({"role": "web_user"})}
REPRESENTATION = dict(USER, Prefer="return=representation")


class NestedInsertCase(ServerTestCase):
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET, "db-tx-end": "commit-allow-override"}

    def post(self, path, body, headers=REPRESENTATION):
        return self.server.post(path, body, headers=headers)

    def rows(self, sql):
        """The rows of a query as a list of dicts (json_agg in the database)."""
        out = self.cluster.psql("SELECT coalesce(json_agg(q), '[]') FROM (%s) q" % sql)
        return json.loads(out)

    def count(self, table, where="true"):
        return int(self.cluster.psql("SELECT count(*) FROM api.%s WHERE %s" % (table, where)))

    def counts(self):
        return [self.count(t) for t in ("albums", "tracks", "track_notes")]


class OneToManyTest(NestedInsertCase):
    def test_album_with_two_new_tracks(self):
        r = self.post("/albums?select=id,title,artist_id,tracks(id,title,position,album_id)",
                      {"title": "Nested", "artist_id": 1,
                       "tracks": [{"title": "a", "position": 1},
                                  {"title": "b", "position": 2, "seconds": 30}]})
        self.assertEqual(r.status, 201, r)
        album = r.json()[0]
        self.assertEqual(album["title"], "Nested")
        self.assertEqual([t["title"] for t in album["tracks"]], ["a", "b"])
        self.assertEqual({t["album_id"] for t in album["tracks"]}, {album["id"]})
        in_db = self.rows("SELECT id, title, position, album_id FROM api.tracks "
                          "WHERE album_id = %d ORDER BY position" % album["id"])
        self.assertEqual(in_db, sorted(album["tracks"], key=lambda t: t["position"]))
        self.assertEqual(self.rows("SELECT seconds FROM api.tracks WHERE album_id = %d "
                                   "AND title = 'b'" % album["id"]), [{"seconds": 30}])

    def test_bulk_albums_each_with_their_own_tracks_and_notes(self):
        """Three parents, each child bound to its own parent; two levels,
        the second through a composite foreign key (album_id, position)."""
        body = [{"title": "P%d" % i, "artist_id": 1,
                 "tracks": [{"title": "P%d-t%d" % (i, k), "position": k,
                             "track_notes": [{"note": "P%d-t%d-n" % (i, k)}]}
                            for k in range(1, i + 2)]}
                for i in range(3)]
        r = self.post("/albums?select=id,title,tracks(title,position,track_notes(note))", body)
        self.assertEqual(r.status, 201, r)
        albums = r.json()
        self.assertEqual([a["title"] for a in albums], ["P0", "P1", "P2"])
        for i, a in enumerate(albums):
            db = self.rows(
                "SELECT t.title, t.position, n.note FROM api.tracks t JOIN api.track_notes n "
                "USING (album_id, position) WHERE t.album_id = %d ORDER BY t.position" % a["id"])
            self.assertEqual(db, [{"title": "P%d-t%d" % (i, k), "position": k,
                                   "note": "P%d-t%d-n" % (i, k)} for k in range(1, i + 2)])
            self.assertEqual(sorted(a["tracks"], key=lambda t: t["position"]),
                             [{"title": t["title"], "position": t["position"],
                               "track_notes": [{"note": t["note"]}]} for t in db])

    def test_the_parent_key_wins_over_a_foreign_key_in_the_body(self):
        r = self.post("/albums?select=id,tracks(album_id)",
                      {"title": "Own", "artist_id": 1,
                       "tracks": [{"title": "x", "position": 1, "album_id": 1}]})
        self.assertEqual(r.status, 201, r)
        album = r.json()[0]
        self.assertEqual(album["tracks"], [{"album_id": album["id"]}])

    def test_one_object_null_and_empty_array(self):
        r = self.post("/albums?select=title,tracks(title)",
                      [{"title": "One", "artist_id": 1, "tracks": {"title": "solo", "position": 1}},
                       {"title": "None", "artist_id": 1, "tracks": None},
                       {"title": "Empty", "artist_id": 1, "tracks": []}])
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json(), [{"title": "One", "tracks": [{"title": "solo"}]},
                                    {"title": "None", "tracks": []},
                                    {"title": "Empty", "tracks": []}])
        self.assertEqual(self.count("tracks", "title = 'solo'"), 1)

    def test_headers_only_and_minimal(self):
        before = self.counts()
        r = self.post("/albums", {"title": "Loc", "artist_id": 1,
                                  "tracks": [{"title": "l", "position": 1}]},
                      headers=dict(USER, Prefer="return=headers-only"))
        self.assertEqual(r.status, 201, r)
        album_id = self.rows("SELECT id FROM api.albums WHERE title = 'Loc'")[0]["id"]
        self.assertEqual(r.headers["Location"], "/albums?id=eq.%d" % album_id)
        r = self.post("/albums", {"title": "Min", "artist_id": 1,
                                  "tracks": [{"title": "m", "position": 1}]}, headers=USER)
        self.assertEqual((r.status, r.body), (201, ""))
        self.assertEqual(self.counts(), [before[0] + 2, before[1] + 2, before[2]])

    def test_tx_rollback_writes_nothing(self):
        before = self.counts()
        r = self.post("/albums?select=title,tracks(title)",
                      {"title": "Gone", "artist_id": 1, "tracks": [{"title": "g", "position": 1}]},
                      headers=dict(USER, Prefer="return=representation, tx=rollback"))
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json(), [{"title": "Gone", "tracks": [{"title": "g"}]}])
        self.assertEqual(self.counts(), before)

    def test_missing_default_applies_to_nested_rows(self):
        self.cluster.psql("ALTER TABLE api.tracks ALTER COLUMN seconds SET DEFAULT 99")
        self.server.stop()      # a schema cache with the new default
        self.start_server()
        r = self.post("/albums?select=id,tracks(title,seconds)",
                      {"title": "Def", "artist_id": 1,
                       "tracks": [{"title": "d1", "position": 1, "seconds": 5},
                                  {"title": "d2", "position": 2}]},
                      headers=dict(REPRESENTATION, Prefer="return=representation, "
                                                          "missing=default"))
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()[0]["tracks"], [{"title": "d1", "seconds": 5},
                                                 {"title": "d2", "seconds": 99}])


class ManyToOneTest(NestedInsertCase):
    def test_new_referenced_rows_and_existing_ones_by_key(self):
        """track_notes -> tracks through a composite key (album_id,
        position): a new track is inserted first and its key fills the
        note's; an object holding only the key names an existing track.
        track_notes -> artists!author_id: a new artist."""
        before_tracks = self.count("tracks")
        r = self.post("/track_notes?select=id,note,album_id,position,author_id,"
                      "tracks(title,album_id,position),artists!author_id(id,name)",
                      [{"note": "on a new track",
                        "tracks": {"title": "brand new", "position": 9, "album_id": 1},
                        "artists!author_id": {"name": "Noted"}},
                       {"note": "on an existing track",
                        "tracks": {"album_id": 1, "position": 1},
                        "artists!author_id": None}])
        self.assertEqual(r.status, 201, r)
        notes = {n["note"]: n for n in r.json()}
        new, old = notes["on a new track"], notes["on an existing track"]
        self.assertEqual(new["tracks"], {"title": "brand new", "album_id": 1, "position": 9})
        self.assertEqual((new["album_id"], new["position"]), (1, 9))
        self.assertEqual(new["artists"]["name"], "Noted")
        self.assertEqual(new["author_id"], new["artists"]["id"])
        existing = self.rows("SELECT title FROM api.tracks WHERE album_id = 1 AND position = 1")
        self.assertEqual(old["tracks"], {"title": existing[0]["title"], "album_id": 1,
                                         "position": 1})
        self.assertIsNone(old["artists"])
        self.assertEqual(self.count("tracks"), before_tracks + 1)
        in_db = self.rows(
            "SELECT n.note, t.title, a.name FROM api.track_notes n JOIN api.tracks t "
            "USING (album_id, position) LEFT JOIN api.artists a ON a.id = n.author_id "
            "WHERE n.id IN (%d, %d) ORDER BY n.note" % (new["id"], old["id"]))
        self.assertEqual(in_db, [
            {"note": "on a new track", "title": "brand new", "name": "Noted"},
            {"note": "on an existing track", "title": existing[0]["title"], "name": None}])

    def test_both_directions_in_one_body(self):
        r = self.post("/albums?select=id,title,artists(id,name),tracks(title)",
                      {"title": "Both", "artists": {"name": "Both artist"},
                       "tracks": [{"title": "t1", "position": 1}]})
        self.assertEqual(r.status, 201, r)
        album = r.json()[0]
        self.assertEqual((album["artists"]["name"], album["tracks"]),
                         ("Both artist", [{"title": "t1"}]))
        self.assertEqual(self.rows(
            "SELECT a.name, t.title FROM api.albums al JOIN api.artists a ON a.id = al.artist_id "
            "JOIN api.tracks t ON t.album_id = al.id WHERE al.id = %d" % album["id"]),
            [{"name": "Both artist", "title": "t1"}])

    def test_a_to_one_value_must_be_one_object(self):
        r = self.post("/albums", {"title": "X", "artists": [{"name": "a"}]})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["code"], "PGRST102")

    def test_a_new_referenced_row_with_rows_of_its_own(self):
        """The referenced track is inserted first and its key read twice:
        by the note referencing it and by the track's other notes."""
        r = self.post("/track_notes", {"note": "first", "tracks": {
            "title": "Twice", "position": 8, "album_id": 1,
            "track_notes": [{"note": "second"}]}}, headers=USER)
        self.assertEqual(r.status, 201, r)
        self.assertEqual(self.rows("SELECT n.note FROM api.track_notes n JOIN api.tracks t "
                                   "USING (album_id, position) WHERE t.title = 'Twice' "
                                   "ORDER BY n.id"), [{"note": "first"}, {"note": "second"}])

    def test_a_failing_referenced_row_writes_nothing(self):
        before = self.counts() + [self.count("artists")]
        r = self.post("/albums?select=id", {"title": "Broken", "artists": {"name": "x",
                                                                         "formed": "never"}})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["code"], "22P02")
        self.assertEqual(self.counts() + [self.count("artists")], before)


class ManyToManyTest(NestedInsertCase):
    def test_playlist_with_two_existing_tracks_and_a_new_one(self):
        before_tracks = self.count("tracks")
        r = self.post("/playlists?select=id,name,tracks(id,title)",
                      {"name": "Mixed", "tracks": [{"id": 1}, {"id": 2},
                                                   {"title": "brand new", "position": 5,
                                                    "album_id": 2}]})
        self.assertEqual(r.status, 201, r)
        playlist = r.json()[0]
        self.assertEqual(self.count("tracks"), before_tracks + 1)
        new_id = self.rows("SELECT id FROM api.tracks WHERE title = 'brand new'")[0]["id"]
        in_db = self.rows("SELECT t.id, t.title FROM api.playlist_track pt JOIN api.tracks t "
                          "ON t.id = pt.track_id WHERE pt.playlist_id = %d ORDER BY t.id"
                          % playlist["id"])
        self.assertEqual([t["id"] for t in in_db], [1, 2, new_id])
        self.assertEqual(sorted(playlist["tracks"], key=lambda t: t["id"]), in_db)

    def test_bulk_playlists_each_with_their_own_links(self):
        r = self.post("/playlists?select=id,name,tracks(id)",
                      [{"name": "L1", "tracks": [{"id": 1}]}, {"name": "L2", "tracks": []},
                       {"name": "L3", "tracks": [{"id": 3}, {"title": "n3", "position": 6,
                                                              "album_id": 2}]}])
        self.assertEqual(r.status, 201, r)
        for p in r.json():
            in_db = self.rows("SELECT track_id AS id FROM api.playlist_track WHERE "
                              "playlist_id = %d ORDER BY track_id" % p["id"])
            self.assertEqual(sorted(p["tracks"], key=lambda t: t["id"]), in_db, p)
        self.assertEqual([len(p["tracks"]) for p in r.json()], [1, 0, 2])

    def test_a_duplicate_link_writes_nothing(self):
        before = self.counts() + [self.count("playlist_track"), self.count("playlists")]
        r = self.post("/playlists", {"name": "Dup", "tracks": [{"id": 1}, {"id": 1}]})
        self.assertEqual((r.status, r.json()["code"]), (409, "23505"), r)
        self.assertEqual(self.counts() + [self.count("playlist_track"),
                                          self.count("playlists")], before)

    def test_rows_nested_under_many_to_many_targets(self):
        """A new target row nests rows of its own: notes referencing it
        (one-to-many, by its composite key) and another playlist it joins
        (many-to-many again); each bound to its own target in a bulk. (A
        many-to-one under a target: tests/integration/test_chinook.c; here
        tracks -> albums is a computed relationship.)"""
        before_playlists = self.count("playlists")
        body = [{"name": "Deep%d" % i, "tracks": [
            {"id": 1},
            {"title": "deep%d" % i, "position": 11 + i, "album_id": 1,
             "track_notes": [{"note": "deep%d-n%d" % (i, k)} for k in range(i + 1)],
             "playlists": [{"name": "Also%d" % i}]}]} for i in range(2)]
        r = self.post("/playlists?select=id,name,tracks(id,title,"
                      "track_notes(note),playlists(name))", body)
        self.assertEqual(r.status, 201, r)
        self.assertEqual(self.count("playlists"), before_playlists + 4)
        for i, playlist in enumerate(r.json()):
            tracks = sorted(playlist["tracks"], key=lambda t: t["id"])
            self.assertEqual(tracks[0]["id"], 1)
            deep = tracks[1]
            in_db = self.rows(
                "SELECT t.title, (SELECT json_agg(n.note ORDER BY n.id) FROM "
                "api.track_notes n WHERE (n.album_id, n.position) = (t.album_id, t.position)) "
                "AS notes, (SELECT json_agg(p.name ORDER BY p.id) FROM api.playlist_track pt "
                "JOIN api.playlists p ON p.id = pt.playlist_id WHERE pt.track_id = t.id) AS "
                "playlists FROM api.tracks t WHERE t.id = %d" % deep["id"])
            self.assertEqual(in_db, [{"title": "deep%d" % i,
                                      "notes": ["deep%d-n%d" % (i, k) for k in range(i + 1)],
                                      "playlists": ["Deep%d" % i, "Also%d" % i]}])
            self.assertEqual(sorted(n["note"] for n in deep["track_notes"]), in_db[0]["notes"])
            self.assertEqual(sorted(p["name"] for p in deep["playlists"]),
                             sorted(in_db[0]["playlists"]))

    def test_a_failing_row_under_a_target_writes_nothing(self):
        before = self.counts() + [self.count("playlist_track"), self.count("playlists")]
        r = self.post("/playlists", {"name": "Fails", "tracks": [
            {"title": "f", "position": 13, "album_id": 1,
             "track_notes": [{"note": "ok"}, {"note": "bad", "author_id": -1}]}]})
        self.assertEqual((r.status, r.json()["code"]), (409, "23503"), r)
        self.assertTrue(r.json()["details"].startswith("tracks[0].track_notes[1]: "), r.json())
        self.assertEqual(self.counts() + [self.count("playlist_track"),
                                          self.count("playlists")], before)


class OneToOneTest(NestedInsertCase):
    def test_both_sides_of_a_one_to_one(self):
        # artist_profiles.artist_id is its primary key and references artists
        r = self.post("/artists?select=id,name,artist_profiles(artist_id,biography)",
                      {"name": "With profile", "artist_profiles": {"biography": "bio"}})
        self.assertEqual(r.status, 201, r)
        artist = r.json()[0]
        self.assertEqual(artist["artist_profiles"], {"artist_id": artist["id"], "biography": "bio"})
        r = self.post("/artist_profiles?select=artist_id,biography,artists(id,name)",
                      {"biography": "reverse", "artists": {"name": "From profile"}})
        self.assertEqual(r.status, 201, r)
        profile = r.json()[0]
        self.assertEqual(profile["artists"], {"id": profile["artist_id"], "name": "From profile"})
        self.assertEqual(self.rows(
            "SELECT a.name, p.biography FROM api.artists a JOIN api.artist_profiles p ON "
            "p.artist_id = a.id WHERE a.id IN (%d, %d) ORDER BY a.id"
            % (artist["id"], profile["artist_id"])),
            [{"name": "With profile", "biography": "bio"},
             {"name": "From profile", "biography": "reverse"}])

    def test_a_one_to_one_value_is_one_object(self):
        r = self.post("/artists", {"name": "x", "artist_profiles": [{"biography": "b"}]})
        self.assertEqual((r.status, r.json()["code"]), (400, "PGRST102"), r)


class AtomicityTest(NestedInsertCase):
    def test_a_failing_third_child_leaves_no_row_anywhere(self):
        before = self.counts()
        r = self.post("/albums?select=id,tracks(id)",
                      {"title": "Broken", "artist_id": 1,
                       "tracks": [{"title": "a", "position": 1}, {"title": "b", "position": 2},
                                  {"title": None, "position": 3}]})
        self.assertEqual(r.status, 400, r)
        body = r.json()
        self.assertEqual(body["code"], "23502")
        # the path of the failing row, then PostgreSQL's details
        self.assertTrue(body["details"].startswith("tracks[2]: Failing row contains ("), body)
        self.assertEqual(self.counts(), before)
        self.assertEqual(self.count("albums", "title = 'Broken'"), 0)

    def test_the_details_name_the_failing_rows_path(self):
        before = self.counts() + [self.count("playlist_track")]
        cases = [
            # a key two rows of one parent share: the second fails
            ("/albums", [{"title": "D", "artist_id": 1,
                          "tracks": [{"title": "a", "position": 1}]},
                         {"title": "D", "artist_id": 1,
                          "tracks": [{"title": "a", "position": 1},
                                     {"title": "b", "position": 1}]}],
             409, "23505", "[1].tracks[1]: Key (album_id, \"position\")=("),
            # a junction row twice
            ("/playlists", {"name": "Dup", "tracks": [{"id": 1}, {"id": 2}, {"id": 1}]},
             409, "23505", "tracks[2]: Key (playlist_id, track_id)=("),
            # a foreign key two levels down
            ("/albums", {"title": "F", "artist_id": 1, "tracks": [
                {"title": "a", "position": 1,
                 "track_notes": [{"note": "ok"}, {"note": "bad", "author_id": 99999}]}]},
             409, "23503", "tracks[0].track_notes[1]: Key (author_id)=(99999) is not present"),
        ]
        for path, body, status, code, details in cases:
            r = self.post(path, body)
            self.assertEqual((r.status, r.json()["code"]), (status, code), r)
            self.assertTrue(r.json()["details"].startswith(details), (details, r))
        self.assertEqual(self.counts() + [self.count("playlist_track")], before)

    def test_row_level_security_on_the_child_refuses(self):
        self.cluster.psql(
            "ALTER TABLE api.tracks ENABLE ROW LEVEL SECURITY;"
            "CREATE POLICY readable ON api.tracks FOR SELECT TO web_user USING (true);"
            "CREATE POLICY no_secret ON api.tracks FOR INSERT TO web_user "
            "WITH CHECK (title <> 'secret')")
        before = self.counts()
        r = self.post("/albums?select=id,tracks(id)",
                      {"title": "RLS", "artist_id": 1,
                       "tracks": [{"title": "fine", "position": 1},
                                  {"title": "secret", "position": 2}]})
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json()["code"], "42501")
        self.assertEqual(self.counts(), before)

    def test_a_parent_row_a_trigger_skips_fails_rather_than_misbinds(self):
        self.cluster.psql(
            "CREATE FUNCTION api.skip_album() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN IF NEW.title = 'skip' THEN RETURN NULL; END IF; RETURN NEW; END $$;"
            "CREATE TRIGGER skip_album BEFORE INSERT ON api.albums "
            "FOR EACH ROW EXECUTE FUNCTION api.skip_album()")
        before = self.counts()
        r = self.post("/albums?select=id", [
            {"title": "skip", "artist_id": 1, "tracks": [{"title": "s", "position": 1}]},
            {"title": "kept", "artist_id": 1, "tracks": [{"title": "k", "position": 1}]}])
        self.assertGreaterEqual(r.status, 400, r)
        self.assertEqual(self.counts(), before)


class GrammarTest(NestedInsertCase):
    def test_a_key_that_is_no_column_nor_relationship_is_pgrst204(self):
        r = self.post("/albums", {"title": "X", "artist_id": 1, "nope": [{"a": 1}]})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json(), {
            "code": "PGRST204", "details": None, "hint": None,
            "message": "Could not find the 'nope' column of 'albums' in the schema cache"})

    def test_an_unknown_hint_is_pgrst200(self):
        r = self.post("/albums", {"title": "X", "artist_id": 1, "tracks!nope": []})
        self.assertEqual(r.status, 400, r)
        body = r.json()
        self.assertEqual(body["code"], "PGRST200")
        self.assertEqual(body["message"], "Could not find a relationship between 'albums' and "
                                          "'tracks' in the schema cache")

    def test_an_ambiguous_key_is_pgrst201_and_a_hint_resolves_it(self):
        # track_notes references artists twice (author_id, editor_id)
        before = self.counts()
        note = {"note": "n", "album_id": 1, "position": 1}
        r = self.post("/artists", {"name": "Amb", "track_notes": [note]})
        self.assertEqual(r.status, 300, r)
        self.assertEqual(r.json()["code"], "PGRST201")
        self.assertEqual(self.counts(), before)
        r = self.post("/artists?select=id,track_notes!editor_id(note,editor_id,author_id)",
                      {"name": "Amb", "track_notes!editor_id": [note]})
        self.assertEqual(r.status, 201, r)
        artist = r.json()[0]
        self.assertEqual(artist["track_notes"], [{"note": "n", "editor_id": artist["id"],
                                                  "author_id": None}])
        self.assertEqual(self.rows("SELECT editor_id, author_id FROM api.track_notes "
                                   "WHERE editor_id = %d" % artist["id"]),
                         [{"editor_id": artist["id"], "author_id": None}])

    def test_aliases_name_nested_rows(self):
        """A body key may be select='s alias of the embed (the shape of the
        representation), or an embed item with its own alias
        (`alias:rel!hint`)."""
        r = self.post("/albums?select=id,songs:tracks(title,remarks:track_notes(note))",
                      {"title": "Aliased", "artist_id": 1,
                       "songs": [{"title": "s1", "position": 1, "remarks": [{"note": "r1"}]}]})
        self.assertEqual(r.status, 201, r)
        album = r.json()[0]
        self.assertEqual(album["songs"], [{"title": "s1", "remarks": [{"note": "r1"}]}])
        self.assertEqual(self.rows(
            "SELECT t.title, n.note FROM api.tracks t JOIN api.track_notes n ON "
            "(n.album_id, n.position) = (t.album_id, t.position) WHERE t.album_id = %d"
            % album["id"]), [{"title": "s1", "note": "r1"}])
        r = self.post("/artists?select=id,edited:track_notes!editor_id(note,editor_id)",
                      {"name": "Alias hint",
                       "edits:track_notes!editor_id": [{"note": "e", "album_id": 1,
                                                        "position": 1}]})
        self.assertEqual(r.status, 201, r)
        artist = r.json()[0]
        self.assertEqual(artist["edited"], [{"note": "e", "editor_id": artist["id"]}])
        self.assertEqual(self.rows("SELECT note FROM api.track_notes WHERE editor_id = %d"
                                   % artist["id"]), [{"note": "e"}])

    def test_an_alias_of_no_relationship_is_pgrst200(self):
        before = self.counts()
        r = self.post("/albums", {"title": "X", "artist_id": 1, "songs:nope": []})
        self.assertEqual((r.status, r.json()["code"]), (400, "PGRST200"), r)
        r = self.post("/albums?select=id,songs:tracks(title)",
                      {"title": "X", "artist_id": 1, "other": []})
        self.assertEqual((r.status, r.json()["code"]), (400, "PGRST204"), r)
        self.assertEqual(self.counts(), before)

    def test_nested_rows_must_be_objects(self):
        r = self.post("/albums", {"title": "X", "artist_id": 1, "tracks": [1, 2]})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["code"], "PGRST102")

    def test_columns_names_the_relationships_to_write(self):
        """?columns= applies to the top level: a relationship it names is
        written; one it does not name is ignored, as PostgREST ignores every
        body key outside ?columns= (Payload.hs RawJSON, QueryBuilder.hs)."""
        r = self.post("/albums?columns=title,artist_id,tracks&select=title,tracks(title)",
                      [{"title": "C1", "artist_id": 1, "extra": 1,
                        "tracks": [{"title": "c1", "position": 1}]}])
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json(), [{"title": "C1", "tracks": [{"title": "c1"}]}])
        r = self.post("/albums?columns=title,artist_id&select=id,title,tracks(title)",
                      {"title": "C2", "artist_id": 1, "tracks": [{"title": "c2", "position": 1}]})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()[0]["tracks"], [])
        self.assertEqual(self.count("tracks", "title = 'c2'"), 0)
        r = self.post("/albums?columns=title,artist_id,tracks", b"{not json",
                      headers=dict(REPRESENTATION, **{"Content-Type": "application/json"}))
        self.assertEqual((r.status, r.json()["code"]), (400, "PGRST102"), r)

    def test_resolution_keeps_postgrest_answer(self):
        r = self.post("/albums", {"title": "X", "artist_id": 1, "tracks": []},
                      headers=dict(USER, Prefer="resolution=merge-duplicates"))
        self.assertEqual((r.status, r.json()["code"]), (400, "PGRST204"), r)


class ConcurrentNestedInsertTest(NestedInsertCase):
    SERVER_CONFIG = dict(NestedInsertCase.SERVER_CONFIG, **{"db-pool": "8"})
    THREADS = 8
    SECONDS = 20

    def test_the_database_holds_exactly_what_the_2xx_responses_describe(self):
        """Eight clients writing albums with tracks on the same tables for
        20 s, every 10th request failing on purpose (a NULL title)."""
        ok, failed, errors = [], [], []
        lock = threading.Lock()
        deadline = time.monotonic() + self.SECONDS

        def client(n):
            i = 0
            while time.monotonic() < deadline:
                i += 1
                bad = i % 10 == 0
                body = {"title": "c%d-%d" % (n, i), "artist_id": 1,
                        "tracks": [{"title": "c%d-%d-%d" % (n, i, k), "position": k}
                                   for k in range(1, 3)] +
                                  ([{"title": None, "position": 3}] if bad else [])}
                try:
                    r = self.post("/albums?select=id,title,tracks(title,position)", body)
                except Exception as e:   # reported below
                    with lock:
                        errors.append(repr(e))
                    continue
                with lock:
                    (ok if r.status == 201 else failed).append((bad, r))

        threads = [threading.Thread(target=client, args=(n,)) for n in range(self.THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertTrue(all(bad for bad, _ in failed), [r for _, r in failed][:3])
        self.assertTrue(all(not bad for bad, _ in ok))
        self.assertGreater(len(ok), 0)
        self.assertGreater(len(failed), 0)
        said = sorted((a["title"], t["title"], t["position"])
                      for _, r in ok for a in r.json() for t in a["tracks"])
        in_db = sorted((row["album"], row["track"], row["position"]) for row in self.rows(
            "SELECT a.title AS album, t.title AS track, t.position FROM api.albums a "
            "JOIN api.tracks t ON t.album_id = a.id WHERE a.title LIKE 'c%-%'"))
        self.assertEqual(in_db, said)
        self.assertEqual(self.count("albums", "title LIKE 'c%-%'"), len(ok))
        log("%d nested inserts acknowledged (%d tracks), %d failed on purpose"
            % (len(ok), len(said), len(failed)))
