-- pgrest demo data (made-up artists and albums); load after schema.sql.
\set ON_ERROR_STOP on

BEGIN;
TRUNCATE api.playlist_tracks, api.playlists, api.tracks, api.albums,
         api.genres, api.artists RESTART IDENTITY;

INSERT INTO api.artists (id, name, country, formed_year) VALUES
  (1, 'The Copper Lanterns', 'IE', 2009),
  (2, 'Mira Okafor',         'NG', 2015),
  (3, 'Glass Harbour',       'NO', 1998),
  (4, 'Los Satélites',       'MX', 2004),
  (5, 'Quiet Engines',       'DE', 2011),
  (6, 'Juniper & Vale',      'US', 2019);

INSERT INTO api.genres (id, name) VALUES
  (1, 'Folk'), (2, 'Afrobeat'), (3, 'Ambient'), (4, 'Rock'), (5, 'Electronic'), (6, 'Indie');

INSERT INTO api.albums (id, artist_id, title, released, price) VALUES
  (1,  1, 'Tin Roof Stories',     '2011-04-18', 9.99),
  (2,  1, 'Lamplight',            '2016-10-07', 11.99),
  (3,  2, 'Harmattan Nights',     '2018-02-23', 10.49),
  (4,  2, 'Lagos to Lisbon',      '2022-06-10', 12.99),
  (5,  3, 'Fjord Lines',          '2001-09-03', 8.99),
  (6,  3, 'Low Tide Signals',     '2014-01-27', 9.49),
  (7,  4, 'Órbita',               '2007-11-15', 9.99),
  (8,  5, 'Idle Machinery',       '2013-05-31', 10.99),
  (9,  5, 'Night Shift Patterns', '2020-08-14', 11.49),
  (10, 6, 'Paper Kites',          '2023-03-03', 12.49);

INSERT INTO api.tracks (id, album_id, genre_id, track_no, title, duration_ms, unit_price) VALUES
  (1,  1,  1, 1, 'Copper Morning',          215000, 0.99),
  (2,  1,  1, 2, 'The Road to Ennis',       187500, 0.99),
  (3,  1,  1, 3, 'Love in a Rainy Town',    243000, 0.99),
  (4,  1,  4, 4, 'Tin Roof',                198200, 0.99),
  (5,  2,  1, 1, 'Lamplight',               256400, 1.29),
  (6,  2,  6, 2, 'Harbour Lights',          201000, 1.29),
  (7,  2,  1, 3, 'Where the Willows Lean',  274800, 1.29),
  (8,  3,  2, 1, 'Harmattan',               312000, 1.09),
  (9,  3,  2, 2, 'Dust and Gold',           289300, 1.09),
  (10, 3,  2, 3, 'Love Letters from Kano',  264100, 1.09),
  (11, 3,  2, 4, 'Night Market',            301700, 1.09),
  (12, 4,  2, 1, 'Lisbon Rain',             233500, 1.29),
  (13, 4,  6, 2, 'Atlantic Crossing',       279900, 1.29),
  (14, 4,  2, 3, 'Second Summer',           221400, 1.29),
  (15, 5,  3, 1, 'Fjord Lines I',           421000, 0.89),
  (16, 5,  3, 2, 'Fjord Lines II',          398500, 0.89),
  (17, 5,  3, 3, 'Ferry at Dawn',           366200, 0.89),
  (18, 6,  3, 1, 'Low Tide',                344000, 0.99),
  (19, 6,  5, 2, 'Signal Buoy',             298700, 0.99),
  (20, 6,  3, 3, 'Salt Glass',              412300, 0.99),
  (21, 7,  4, 1, 'Órbita',                  226600, 0.99),
  (22, 7,  4, 2, 'Satélite de Amor',        241800, 0.99),
  (23, 7,  4, 3, 'Desierto Eléctrico',      259000, 0.99),
  (24, 7,  6, 4, 'Luna de Papel',           203300, 0.99),
  (25, 8,  5, 1, 'Idle',                    330100, 1.19),
  (26, 8,  5, 2, 'Conveyor',                287000, 1.19),
  (27, 8,  5, 3, 'Rust Never Sleeps Here',  305500, 1.19),
  (28, 9,  5, 1, 'Night Shift',             356900, 1.29),
  (29, 9,  5, 2, 'Overtime Love',           279400, 1.29),
  (30, 9,  3, 3, 'Empty Platform',          402000, 1.29),
  (31, 10, 6, 1, 'Paper Kites',             198800, 1.39),
  (32, 10, 1, 2, 'Juniper',                 214600, 1.39),
  (33, 10, 6, 3, 'Slow Love Song',          247700, 1.39),
  (34, 10, 1, 4, 'Vale',                    189900, 1.39);

INSERT INTO api.playlists (id, name, created_at) VALUES
  (1, 'Rainy Sunday', '2024-01-14 10:00:00+00'),
  (2, 'Late Night Focus', '2024-02-02 23:30:00+00'),
  (3, 'Road Trip', '2024-05-20 08:15:00+00');

INSERT INTO api.playlist_tracks (playlist_id, track_id, position) VALUES
  (1, 3, 1), (1, 5, 2), (1, 12, 3), (1, 18, 4), (1, 33, 5),
  (2, 15, 1), (2, 19, 2), (2, 25, 3), (2, 28, 4), (2, 30, 5),
  (3, 2, 1), (3, 8, 2), (3, 13, 3), (3, 21, 4), (3, 23, 5), (3, 31, 6);

-- the ids above were given explicitly: move the identity sequences past them
SELECT setval(pg_get_serial_sequence('api.' || t, 'id'), m)
FROM (VALUES ('artists', (SELECT max(id) FROM api.artists)),
             ('genres', (SELECT max(id) FROM api.genres)),
             ('albums', (SELECT max(id) FROM api.albums)),
             ('tracks', (SELECT max(id) FROM api.tracks)),
             ('playlists', (SELECT max(id) FROM api.playlists))) AS s (t, m);
COMMIT;
ANALYZE;
