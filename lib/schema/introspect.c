/* Schema cache introspection (PostgREST SchemaCache.hs: querySchemaCache).
 *
 * PostgREST runs seven statements in one READ transaction after
 * `set local schema ''`; pgrest runs one statement that returns the whole
 * snapshot document (the JSON format of schema_cache.h) as one text value.
 * The statement itself switches search_path to '' for its own duration
 * (set_config(..., true) evaluated before the catalog queries, then the
 * previous value is restored) so that format_type / regproc print every
 * name outside pg_catalog schema-qualified, as PostgREST's do.
 *
 * $1 text[]: exposed schemas (db-schemas)
 * $2 text[]: extra search path (db-extra-search-path), views there are
 *            followed when mapping view columns to base-table columns.
 * $3 text[]: db-hoisted-tx-settings, regular expressions a function's
 *            "name=value" proconfig entry must match to be hoisted.
 *
 * The role settings part (PostgREST Config/Database.hs queryRoleSettings)
 * depends on the server version (has_parameter_privilege, PostgreSQL 15)
 * and on db-config, so it is chosen when the statement is assembled.
 */
#include "schema/introspect.h"

#include <libpq-fe.h>
#include <string.h>

#include "config/db_config.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Keep in sync with the snapshot format in schema_cache.h. */
static const char introspect_head[] =
    "SELECT doc FROM (\n"
    "  SELECT doc, set_config('search_path', orig, true) AS restored FROM (\n"
    "    SELECT orig, (\n"
    "WITH RECURSIVE\n"
    "exposed_rels AS (\n"
    "  SELECT c.oid, c.reltype, n.nspname, c.relname, c.relkind\n"
    "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace\n"
    "  WHERE c.relkind IN ('r','v','m','f','p') AND NOT c.relispartition\n"
    "    AND n.nspname = ANY($1::text[])\n"
    "),\n"
    "columns AS (\n"
    "  SELECT\n"
    "    a.attrelid,\n"
    "    a.attname::text AS name,\n"
    "    CASE WHEN t.typtype = 'd' THEN\n"
    "      CASE WHEN nbt.nspname = 'pg_catalog' THEN format_type(bt.oid, NULL::integer)\n"
    "           ELSE format_type(a.atttypid, a.atttypmod) END\n"
    "    ELSE\n"
    "      CASE WHEN nt.nspname = 'pg_catalog' THEN format_type(a.atttypid, NULL::integer)\n"
    "           ELSE format_type(a.atttypid, a.atttypmod) END\n"
    "    END AS type,\n"
    "    format_type(a.atttypid, a.atttypmod) AS nominal_type,\n"
    "    NOT (a.attnotnull OR (t.typtype = 'd' AND t.typnotnull)) AS nullable,\n"
    "    CASE\n"
    "      WHEN t.typbasetype <> 0 AND ad.adbin IS NULL THEN pg_get_expr(t.typdefaultbin, 0)\n"
    "      WHEN a.attidentity = 'd' THEN format('nextval(%L)', seq.objid::regclass)\n"
    "      WHEN a.attgenerated = 's' THEN NULL\n"
    "      ELSE pg_get_expr(ad.adbin, ad.adrelid)\n"
    "    END AS \"default\",\n"
    "    information_schema._pg_char_max_length(\n"
    "      information_schema._pg_truetypid(a.*, t.*),\n"
    "      information_schema._pg_truetypmod(a.*, t.*))::integer AS max_length,\n"
    "    a.attnum::integer AS position,\n"
    "    d.description,\n"
    "    (SELECT json_agg(e.enumlabel ORDER BY e.enumsortorder)\n"
    "       FROM pg_enum e WHERE e.enumtypid = COALESCE(bt.oid, t.oid)) AS enum,\n"
    "    COALESCE(bt.typcategory, t.typcategory) = 'A' AS is_array,\n"
    "    COALESCE(bt.typtype, t.typtype) = 'c' AS is_composite\n"
    "  FROM exposed_rels r\n"
    "  JOIN pg_attribute a ON a.attrelid = r.oid\n"
    "  JOIN pg_type t ON t.oid = a.atttypid\n"
    "  LEFT JOIN pg_namespace nt ON nt.oid = t.typnamespace\n"
    "  -- PostgREST tablesSqlQuery: a domain's type is its ultimate base type\n"
    "  -- (through domains over domains) when that is a pg_catalog type\n"
    "  LEFT JOIN base_types dbt ON t.typtype = 'd' AND dbt.oid = t.oid\n"
    "  LEFT JOIN pg_type bt ON bt.oid = dbt.base_type\n"
    "  LEFT JOIN pg_namespace nbt ON nbt.oid = bt.typnamespace\n"
    "  LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum\n"
    "  LEFT JOIN pg_description d ON d.objoid = a.attrelid AND d.objsubid = a.attnum\n"
    "                            AND d.classoid = 'pg_class'::regclass\n"
    "  LEFT JOIN pg_depend seq ON seq.refobjid = a.attrelid AND seq.refobjsubid = a.attnum\n"
    "                         AND seq.deptype = 'i' AND seq.classid = 'pg_class'::regclass\n"
    "                         AND seq.refclassid = 'pg_class'::regclass\n"
    "  WHERE a.attnum > 0 AND NOT a.attisdropped\n"
    "),\n"
    "-- PostgREST SchemaCache.hs (allViewsKeyDependencies): the view definition\n"
    "-- (pg_rewrite.ev_action) is turned into JSON with replace()/one regexp to\n"
    "-- read :resorigtbl/:resorigcol of the top-level targetList, then followed\n"
    "-- recursively through views of views in the exposed + extra schemas.\n"
    "views AS (\n"
    "  SELECT c.oid AS view_id, n.nspname AS view_schema, c.relname AS view_name,\n"
    "         r.ev_action AS view_definition\n"
    "  FROM pg_class c\n"
    "  JOIN pg_namespace n ON n.oid = c.relnamespace\n"
    "  JOIN pg_rewrite r ON r.ev_class = c.oid\n"
    "  WHERE c.relkind IN ('v','m')\n"
    "    AND n.nspname = ANY($1::text[] || COALESCE($2::text[], '{}'))\n"
    "),\n"
    "transform_json AS (\n"
    "  SELECT view_id, view_schema, view_name,\n"
    "    replace(replace(replace(replace(replace(replace(replace(\n"
    "    regexp_replace(\n"
    "    replace(replace(replace(replace(replace(replace(replace(replace(\n"
    "    replace(replace(replace(\n"
    "      view_definition::text,\n"
    "      '<>', '()'),\n"
    "      ',', ''),\n"
    "      E'\\\\{', ''),\n"
    "      E'\\\\}', ''),\n"
    "      ' :targetList ', ',\"targetList\":'),\n"
    "      ' :resno ', ',\"resno\":'),\n"
    "      ' :resorigtbl ', ',\"resorigtbl\":'),\n"
    "      ' :resorigcol ', ',\"resorigcol\":'),\n"
    "      '{', '{ :'),\n"
    "      '((', '{(('),\n"
    "      '({', '{({'),\n"
    "      ' :[^}{,]+', ',\"\":', 'g'),\n"
    "      ',\"\":}', '}'),\n"
    "      ',\"\":,', ','),\n"
    "      '{(', '('),\n"
    "      '{,', '{'),\n"
    "      '(', '['),\n"
    "      ')', ']'),\n"
    "      ' ', ',')::json AS view_definition\n"
    "  FROM views\n"
    "),\n"
    "target_entries AS (\n"
    "  SELECT view_id, view_schema, view_name,\n"
    "         json_array_elements(view_definition->0->'targetList') AS entry\n"
    "  FROM transform_json\n"
    "),\n"
    "results AS (\n"
    "  SELECT view_id, view_schema, view_name,\n"
    "         (entry->>'resno')::int AS view_column,\n"
    "         (entry->>'resorigtbl')::oid AS resorigtbl,\n"
    "         (entry->>'resorigcol')::int AS resorigcol\n"
    "  FROM target_entries\n"
    "),\n"
    "recursion (view_id, view_schema, view_name, view_column, resorigtbl, resorigcol,\n"
    "           is_cycle, path) AS (\n"
    "  SELECT r.*, false, ARRAY[resorigtbl]\n"
    "  FROM results r\n"
    "  WHERE view_schema = ANY($1::text[])\n"
    "  UNION ALL\n"
    "  SELECT v.view_id, v.view_schema, v.view_name, v.view_column,\n"
    "         tab.resorigtbl, tab.resorigcol,\n"
    "         tab.resorigtbl = ANY(path), path || tab.resorigtbl\n"
    "  FROM recursion v\n"
    "  JOIN results tab ON v.resorigtbl = tab.view_id AND v.resorigcol = tab.view_column\n"
    "  WHERE NOT is_cycle\n"
    "),\n"
    "key_columns AS (\n"
    "  SELECT conrelid AS relid, unnest(conkey) AS attnum\n"
    "  FROM pg_constraint WHERE contype IN ('p','u','f')\n"
    "  UNION\n"
    "  SELECT confrelid, unnest(confkey) FROM pg_constraint WHERE contype = 'f'\n"
    "),\n"
    "view_columns AS (\n"
    "  SELECT DISTINCT rec.view_schema, rec.view_name, vcol.attname::text AS view_column,\n"
    "         vcol.attnum AS view_attnum,\n"
    "         tn.nspname::text AS table_schema, tbl.relname::text AS table_name,\n"
    "         tcol.attname::text AS table_column, rec.resorigtbl, rec.resorigcol\n"
    "  FROM recursion rec\n"
    "  JOIN key_columns k ON k.relid = rec.resorigtbl AND k.attnum = rec.resorigcol\n"
    "  JOIN pg_attribute vcol ON vcol.attrelid = rec.view_id AND vcol.attnum = rec.view_column\n"
    "  JOIN pg_class tbl ON tbl.oid = rec.resorigtbl\n"
    "  JOIN pg_namespace tn ON tn.oid = tbl.relnamespace\n"
    "  JOIN pg_attribute tcol ON tcol.attrelid = rec.resorigtbl AND tcol.attnum = rec.resorigcol\n"
    "),\n"
    "-- PostgREST addViewPrimaryKeys: a view's PK is, for each base-table PK\n"
    "-- whose columns all appear in the view, the first view column of each.\n"
    "view_key_cols AS (\n"
    "  SELECT v.view_schema, v.view_name, con.oid AS conoid, k.ord,\n"
    "         cardinality(con.conkey) AS ncol, v.table_schema, v.table_name,\n"
    "         (array_agg(v.view_column ORDER BY v.view_attnum))[1] AS view_column\n"
    "  FROM view_columns v\n"
    "  JOIN pg_constraint con ON con.conrelid = v.resorigtbl AND con.contype = 'p'\n"
    "  CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)\n"
    "  WHERE k.attnum = v.resorigcol\n"
    "  GROUP BY v.view_schema, v.view_name, con.oid, k.ord, con.conkey,\n"
    "           v.table_schema, v.table_name\n"
    "),\n"
    "view_pks AS (\n"
    "  SELECT view_schema, view_name,\n"
    "         json_agg(view_column ORDER BY table_schema, table_name, conoid, ord) AS pk\n"
    "  FROM (SELECT *, count(*) OVER (PARTITION BY view_schema, view_name, conoid) AS n\n"
    "          FROM view_key_cols) x\n"
    "  WHERE n = ncol\n"
    "  GROUP BY view_schema, view_name\n"
    "),\n"
    "columns_agg AS (\n"
    "  SELECT c.attrelid, json_agg(json_build_object(\n"
    "        'name', c.name, 'type', c.type, 'nominal_type', c.nominal_type,\n"
    "        'nullable', c.nullable, 'default', c.\"default\",\n"
    "        'max_length', c.max_length, 'position', c.position,\n"
    "        'description', c.description, 'enum', c.enum,\n"
    "        'is_array', c.is_array, 'is_composite', c.is_composite)\n"
    "        ORDER BY c.position) AS doc\n"
    "  FROM columns c GROUP BY c.attrelid\n"
    "),\n"
    "-- PostgREST tbl_pk_cols: a table's PK columns in name order (not the\n"
    "-- constraint's), as on_conflict and the cache dump list them.\n"
    "table_pks AS (\n"
    "  SELECT con.conrelid AS relid,\n"
    "         json_agg(a.attname::text ORDER BY a.attname) AS pk\n"
    "  FROM pg_constraint con\n"
    "  CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)\n"
    "  JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum\n"
    "  WHERE con.contype = 'p' AND con.conrelid IN (SELECT oid FROM exposed_rels)\n"
    "  GROUP BY con.conrelid\n"
    "),\n"
    "tables AS (\n"
    "  SELECT json_agg(json_build_object(\n"
    "    'schema', r.nspname, 'name', r.relname, 'kind', r.relkind,\n"
    "    'description', d.description,\n"
    "    'insertable', r.relkind IN ('r','p') OR (r.relkind IN ('v','f')\n"
    "                  AND (pg_relation_is_updatable(r.oid::regclass, true) & 8) = 8),\n"
    "    'updatable', r.relkind IN ('r','p') OR (r.relkind IN ('v','f')\n"
    "                  AND (pg_relation_is_updatable(r.oid::regclass, true) & 4) = 4),\n"
    "    'deletable', r.relkind IN ('r','p') OR (r.relkind IN ('v','f')\n"
    "                  AND (pg_relation_is_updatable(r.oid::regclass, true) & 16) = 16),\n"
    "    'pk', COALESCE(tp.pk, vp.pk, '[]'::json),\n"
    "    'copy_as_insert', r.relkind IN ('r','p')\n"
    "      AND NOT (SELECT relrowsecurity FROM pg_class WHERE oid = r.oid)\n"
    "      AND NOT EXISTS (SELECT 1 FROM pg_rewrite w WHERE w.ev_class = r.oid\n"
    "                      AND w.ev_type = '3')\n"
    "      AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = r.oid\n"
    "                      AND a.attnum > 0 AND NOT a.attisdropped\n"
    "                      AND (a.attidentity = 'a' OR a.attgenerated <> ''))\n"
    "      AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = r.oid\n"
    "                      AND NOT g.tgisinternal AND g.tgtype & 4 <> 0\n"
    "                      AND g.tgtype & 66 = 0),\n"
    "    'columns', COALESCE(ca.doc, '[]'::json)\n"
    "  ) ORDER BY r.nspname, r.relname) AS doc\n"
    "  FROM exposed_rels r\n"
    "  LEFT JOIN pg_description d ON d.objoid = r.oid AND d.objsubid = 0\n"
    "                            AND d.classoid = 'pg_class'::regclass\n"
    "  LEFT JOIN columns_agg ca ON ca.attrelid = r.oid\n"
    "  LEFT JOIN table_pks tp ON tp.relid = r.oid\n"
    "  LEFT JOIN view_pks vp ON r.relkind IN ('v','m')\n"
    "                       AND vp.view_schema = r.nspname AND vp.view_name = r.relname\n"
    "),\n"
    "-- PostgREST allM2OandO2ORels: one_to_one when the FK columns are exactly\n"
    "-- the columns of a PK or UNIQUE constraint of the referencing table.\n"
    "pks_uniques_cols AS (\n"
    "  SELECT conrelid, array_agg(a.attname::text ORDER BY a.attnum) AS cols\n"
    "  FROM pg_constraint\n"
    "  CROSS JOIN LATERAL unnest(conkey) AS k(attnum)\n"
    "  JOIN pg_attribute a ON a.attrelid = conrelid AND a.attnum = k.attnum\n"
    "  WHERE contype IN ('p','u')\n"
    "  GROUP BY oid, conrelid\n"
    "),\n"
    "relevant_rels AS (\n"
    "  SELECT oid FROM exposed_rels\n"
    "  UNION\n"
    "  SELECT resorigtbl FROM view_columns\n"
    "),\n"
    "fks AS (\n"
    "  SELECT json_agg(json_build_object(\n"
    "    'name', con.conname, 'schema', ns1.nspname, 'table', tab.relname,\n"
    "    'columns', ci.cols, 'ref_schema', ns2.nspname, 'ref_table', other.relname,\n"
    "    'ref_columns', ci.fcols,\n"
    "    'one_to_one', EXISTS (SELECT 1 FROM pks_uniques_cols u\n"
    "                           WHERE u.conrelid = con.conrelid AND u.cols = ci.sorted_cols),\n"
    "    -- addM2MRels needs a junction's PK even in an internal schema\n"
    "    'table_pk', CASE WHEN con.conrelid NOT IN (SELECT oid FROM exposed_rels) THEN\n"
    "      (SELECT json_agg(a.attname::text ORDER BY k.ord)\n"
    "       FROM pg_constraint pk\n"
    "       CROSS JOIN LATERAL unnest(pk.conkey) WITH ORDINALITY AS k(attnum, ord)\n"
    "       JOIN pg_attribute a ON a.attrelid = pk.conrelid AND a.attnum = k.attnum\n"
    "       WHERE pk.contype = 'p' AND pk.conrelid = con.conrelid) END)\n"
    "    ORDER BY con.conrelid, con.conname) AS doc\n"
    "  FROM pg_constraint con\n"
    "  JOIN LATERAL (\n"
    "    SELECT json_agg(cols.attname ORDER BY ord) AS cols,\n"
    "           json_agg(refs.attname ORDER BY ord) AS fcols,\n"
    "           array_agg(cols.attname::text ORDER BY cols.attnum) AS sorted_cols\n"
    "    FROM unnest(con.conkey, con.confkey) WITH ORDINALITY AS _(col, ref, ord)\n"
    "    JOIN pg_attribute cols ON cols.attrelid = con.conrelid AND cols.attnum = col\n"
    "    JOIN pg_attribute refs ON refs.attrelid = con.confrelid AND refs.attnum = ref\n"
    "  ) ci ON true\n"
    "  JOIN pg_class tab ON tab.oid = con.conrelid\n"
    "  JOIN pg_namespace ns1 ON ns1.oid = tab.relnamespace\n"
    "  JOIN pg_class other ON other.oid = con.confrelid\n"
    "  JOIN pg_namespace ns2 ON ns2.oid = other.relnamespace\n"
    "  WHERE con.contype = 'f' AND con.conparentid = 0\n"
    "    AND (con.conrelid IN (SELECT oid FROM relevant_rels)\n"
    "         OR con.confrelid IN (SELECT oid FROM relevant_rels))\n"
    "),\n"
    "vcols AS (\n"
    "  SELECT json_agg(json_build_object(\n"
    "    'view_schema', view_schema, 'view', view_name, 'view_column', view_column,\n"
    "    'table_schema', table_schema, 'table', table_name, 'table_column', table_column)\n"
    "    ORDER BY view_schema, view_name, view_attnum, table_schema, table_name, table_column) AS doc\n"
    "  FROM view_columns\n"
    "),\n"
    "-- PostgREST baseTypesCte: domains resolved to their ultimate base type\n"
    "-- (columns and function return types).\n"
    "base_types AS (\n"
    "  WITH RECURSIVE recurse AS (\n"
    "    SELECT oid, typbasetype, COALESCE(NULLIF(typbasetype, 0), oid) AS base_type\n"
    "    FROM pg_type\n"
    "    UNION\n"
    "    SELECT t.oid, b.typbasetype, COALESCE(NULLIF(b.typbasetype, 0), b.oid)\n"
    "    FROM recurse t JOIN pg_type b ON t.typbasetype = b.oid\n"
    "  )\n"
    "  SELECT oid, base_type FROM recurse WHERE typbasetype = 0\n"
    "),\n"
    "procs AS (\n"
    "  SELECT p.* FROM pg_proc p JOIN pg_namespace pn ON pn.oid = p.pronamespace\n"
    "  WHERE pn.nspname = ANY($1::text[]) AND p.prokind = 'f'\n"
    "),\n"
    "proc_args AS (\n"
    "  SELECT p.oid, a.name, a.type, a.mode,\n"
    "         row_number() OVER (PARTITION BY p.oid ORDER BY a.idx) AS in_idx,\n"
    "         p.pronargs, p.pronargdefaults\n"
    "  FROM procs p\n"
    "  CROSS JOIN LATERAL unnest(COALESCE(p.proallargtypes, p.proargtypes::oid[]),\n"
    "                            p.proargnames, p.proargmodes)\n"
    "       WITH ORDINALITY AS a(type, name, mode, idx)\n"
    "  WHERE COALESCE(a.mode, 'i') IN ('i','b','v')\n"
    "),\n"
    "arguments AS (\n"
    "  SELECT oid,\n"
    "    json_agg(json_build_object(\n"
    "      'name', COALESCE(name, ''),\n"
    "      'type', format_type(type, NULL),\n"
    "      'type_max_length', -1,\n"
    "      'cast_type', CASE type\n"
    "          WHEN 'bit'::regtype THEN 'bit varying'\n"
    "          WHEN 'bit varying'::regtype THEN 'bit varying'\n"
    "          WHEN 'character'::regtype THEN 'character varying'\n"
    "          WHEN 'character varying'::regtype THEN 'character varying'\n"
    "          WHEN 'bit[]'::regtype THEN 'bit varying[]'\n"
    "          WHEN 'character[]'::regtype THEN 'character varying[]'\n"
    "          ELSE format_type(type, NULL) END,\n"
    "      'required', in_idx <= (pronargs - pronargdefaults),\n"
    "      'variadic', COALESCE(mode = 'v', false)) ORDER BY in_idx) AS params,\n"
    "    -- PostgREST counts NULL names only: proargnames has '' for an\n"
    "    -- unnamed argument beside named ones, which counts as named\n"
    "    CASE count(*) - count(name)\n"
    "      WHEN 0 THEN true\n"
    "      WHEN 1 THEN (array_agg(type))[1] IN ('bytea'::regtype, 'json'::regtype,\n"
    "                   'jsonb'::regtype, 'text'::regtype, 'xml'::regtype)\n"
    "      ELSE false\n"
    "    END AS callable\n"
    "  FROM proc_args GROUP BY oid\n"
    "),\n"
    "routines AS (\n"
    "  SELECT json_agg(json_build_object(\n"
    "    'schema', pn.nspname, 'name', p.proname, 'description', d.description,\n"
    "    'params', COALESCE(a.params, '[]'::json),\n"
    "    'return_schema', tn.nspname,\n"
    "    'return_type', COALESCE(comp.relname, t.typname),\n"
    "    'return_kind', CASE\n"
    "        WHEN t.typtype = 'c' OR COALESCE(p.proargmodes::text[] && '{t,b,o}', false)\n"
    "          THEN 'composite'\n"
    "        -- Routine.hs funcReturnsVoid: Single (Scalar void) only\n"
    "        WHEN t.oid = 'void'::regtype AND NOT p.proretset THEN 'void'\n"
    "        ELSE 'scalar' END,\n"
    "    'return_composite_alias', t.typtype = 'c' AND bt.oid <> bt.base_type,\n"
    "    'returns_set', p.proretset,\n"
    "    'volatility', p.provolatile,\n"
    "    'has_out_params', COALESCE(p.proargmodes::text[] && '{t,b,o}', false),\n"
    "    'out_columns', (SELECT COALESCE(json_agg(json_build_object(\n"
    "                      'name', o.name, 'type', format_type(o.type, NULL),\n"
    "                      'is_composite', ot.typtype = 'c',\n"
    "                      'is_array', ot.typcategory = 'A') ORDER BY o.idx), '[]'::json)\n"
    "                    FROM unnest(p.proallargtypes, p.proargnames, p.proargmodes)\n"
    "                         WITH ORDINALITY AS o(type, name, mode, idx)\n"
    "                    JOIN pg_type ot ON ot.oid = o.type\n"
    "                    WHERE o.mode IN ('o','b','t')),\n"
    "    'isolation_level', (SELECT lower(split_part(split_part(s, '=', 2), ',', 1))\n"
    "                          FROM unnest(p.proconfig) s\n"
    "                         WHERE s LIKE 'default_transaction_isolation=%' LIMIT 1),\n"
    "    'settings', COALESCE((SELECT json_agg(json_build_array(\n"
    "                   substr(s, 1, strpos(s, '=') - 1), substr(s, strpos(s, '=') + 1)))\n"
    "                 FROM unnest(p.proconfig) s WHERE s ~ ANY($3::text[])), '[]'::json))\n"
    "    ORDER BY pn.nspname, p.proname, p.oid) AS doc\n"
    "  FROM procs p\n"
    "  LEFT JOIN arguments a ON a.oid = p.oid\n"
    "  JOIN pg_namespace pn ON pn.oid = p.pronamespace\n"
    "  JOIN base_types bt ON bt.oid = p.prorettype\n"
    "  JOIN pg_type t ON t.oid = bt.base_type\n"
    "  JOIN pg_namespace tn ON tn.oid = t.typnamespace\n"
    "  LEFT JOIN pg_class comp ON comp.oid = t.typrelid\n"
    "  LEFT JOIN pg_description d ON d.objoid = p.oid AND d.classoid = 'pg_proc'::regclass\n"
    "  WHERE t.oid <> 'trigger'::regtype AND COALESCE(a.callable, true)\n"
    "),\n"
    "-- PostgREST allComputedRels: f(table_row) returning a row type of another\n"
    "-- (or the same) relation; to-one when not SETOF or ROWS 1.\n"
    "computed AS (\n"
    "  SELECT json_agg(json_build_object(\n"
    "    'function_schema', pn.nspname, 'function', p.proname,\n"
    "    'table_schema', arg_ns.nspname, 'table', arg_rel.relname,\n"
    "    'target_schema', ret_ns.nspname, 'target', ret_rel.relname,\n"
    "    'to_one', NOT p.proretset OR p.prorows = 1)\n"
    "    ORDER BY pn.nspname, p.proname, p.oid) AS doc\n"
    "  -- every function of any kind and schema, as PostgREST's: the map\n"
    "  -- files it under the function's schema, found from that schema only\n"
    "  FROM pg_proc p\n"
    "  JOIN pg_namespace pn ON pn.oid = p.pronamespace\n"
    "  JOIN pg_class arg_rel ON arg_rel.reltype = p.proargtypes[0]\n"
    "                        AND arg_rel.relkind IN ('r','v','m','f','p')\n"
    "  JOIN pg_namespace arg_ns ON arg_ns.oid = arg_rel.relnamespace\n"
    "  JOIN pg_class ret_rel ON ret_rel.reltype = p.prorettype\n"
    "                        AND ret_rel.relkind IN ('r','v','m','f','p')\n"
    "  JOIN pg_namespace ret_ns ON ret_ns.oid = ret_rel.relnamespace\n"
    "  WHERE p.pronargs = 1\n"
    "),\n"
    "-- PostgREST allDataRepresentations: implicit function casts between a\n"
    "-- domain and json/text.\n"
    "representations AS (\n"
    "  SELECT json_agg(json_build_object(\n"
    "    'source', format_type(c.castsource, NULL),\n"
    "    'target', format_type(c.casttarget, NULL),\n"
    "    'function', c.castfunc::regproc::text)\n"
    "    ORDER BY c.castsource, c.casttarget) AS doc\n"
    "  FROM pg_cast c\n"
    "  JOIN pg_type src_t ON src_t.oid = c.castsource\n"
    "  JOIN pg_type dst_t ON dst_t.oid = c.casttarget\n"
    "  WHERE c.castcontext = 'i' AND c.castmethod = 'f'\n"
    "    AND has_function_privilege(c.castfunc, 'execute')\n"
    "    AND ((src_t.typtype = 'd' AND c.casttarget IN ('json'::regtype, 'text'::regtype))\n"
    "      OR (dst_t.typtype = 'd' AND c.castsource IN ('json'::regtype, 'text'::regtype)))\n"
    "),\n"
    "-- PostgREST mediaHandlers: domains named like a media type (or */*),\n"
    "-- returned by an aggregate over a row type / anyelement, or by a\n"
    "-- non-set function (whose handler is the domain: a no-op cast).\n"
    "media_types AS (\n"
    "  SELECT t.oid, t.typname::text AS typname, lower(t.typname) AS media_type,\n"
    "         t.typnamespace,\n"
    "         CASE t.typname WHEN '*/*' THEN 'application/octet-stream'\n"
    "              ELSE t.typname::text END AS resolved,\n"
    "         format_type(b.oid, NULL) AS base_type, b.typsend::regproc::text AS send_fn\n"
    "  FROM pg_type t JOIN pg_type b ON b.oid = t.typbasetype\n"
    "  WHERE t.typbasetype <> 0\n"
    "    AND (t.typname ~* '^[A-Za-z0-9.-]+/[A-Za-z0-9.+-]+$' OR t.typname = '*/*')\n"
    "),\n"
    "handler_rows AS (\n"
    "  SELECT pn.nspname::text AS handler_schema, p.proname::text AS handler_name,\n"
    "         arg_ns.nspname::text AS target_schema, arg_t.typname::text AS target_name,\n"
    "         arg_t.oid = 'anyelement'::regtype AS any_element, mt.media_type,\n"
    "         mt.resolved, mt.base_type, mt.send_fn, false AS function_target\n"
    "  FROM media_types mt\n"
    "  JOIN pg_proc p ON p.prorettype = mt.oid\n"
    "  JOIN pg_namespace pn ON pn.oid = p.pronamespace\n"
    "  JOIN pg_aggregate agg ON agg.aggfnoid = p.oid\n"
    "  JOIN pg_type arg_t ON arg_t.oid = p.proargtypes[0]\n"
    "  JOIN pg_namespace arg_ns ON arg_ns.oid = arg_t.typnamespace\n"
    "  WHERE pn.nspname = ANY($1::text[]) AND p.pronargs = 1\n"
    "    AND (arg_t.oid = 'anyelement'::regtype OR arg_t.oid IN (\n"
    "      SELECT reltype FROM pg_class WHERE relkind IN ('v','r','m','f','p')))\n"
    "  UNION\n"
    "  SELECT typ_ns.nspname::text, mt.typname, pn.nspname::text, p.proname::text,\n"
    "         false, mt.media_type, mt.resolved, mt.base_type, mt.send_fn, true\n"
    "  FROM pg_proc p\n"
    "  JOIN pg_namespace pn ON pn.oid = p.pronamespace\n"
    "  JOIN media_types mt ON mt.oid = p.prorettype\n"
    "  JOIN pg_namespace typ_ns ON typ_ns.oid = mt.typnamespace\n"
    "  WHERE pn.nspname = ANY($1::text[]) AND NOT p.proretset AND p.prokind = 'f'\n"
    "),\n"
    "media_handlers AS (\n"
    "  SELECT json_agg(json_build_object(\n"
    "    'handler_schema', handler_schema, 'handler_name', handler_name,\n"
    "    'target_schema', target_schema, 'target_name', target_name,\n"
    "    'any_element', any_element, 'media_type', media_type,\n"
    "    'resolved_media_type', resolved, 'base_type', base_type, 'send_fn', send_fn,\n"
    "    'function_target', function_target)\n"
    "    ORDER BY target_schema, target_name, media_type, handler_schema, handler_name) AS doc\n"
    "  FROM handler_rows\n"
    "),\n";

/* role_settings CTE: the settings of the roles the authenticator may
 * switch to (direct members), user-settable ones only (plus, from
 * PostgreSQL 15, those it was granted SET on); default_transaction_isolation
 * goes apart as the role's isolation level. PostgREST reads
 * pg_roles.rolconfig, the ALTER ROLE ... SET ones; pgrest also reads
 * ALTER ROLE ... IN DATABASE for this database, winning over those, so a
 * role gets what PostgreSQL would give it logging in here. */
static const char role_settings_head[] =
    "role_settings AS (\n"
    "  WITH role_setting AS (\n"
    "    SELECT r.rolname, s.setdatabase, unnest(s.setconfig) AS setting\n"
    "    FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid\n"
    "    JOIN pg_db_role_setting s ON s.setrole = r.oid AND s.setdatabase IN\n"
    "      (0, (SELECT oid FROM pg_database WHERE datname = current_database()))\n"
    "    WHERE m.member = quote_ident(current_user)::regrole::oid\n"
    "  ),\n"
    "  kv_settings AS (\n"
    "    SELECT DISTINCT ON (rolname, key) rolname, key, value FROM (\n"
    "      SELECT rolname, setdatabase,\n"
    "             substr(setting, 1, strpos(setting, '=') - 1) AS key,\n"
    "             substr(setting, strpos(setting, '=') + 1) AS value\n"
    "      FROM role_setting) kv\n"
    "    ORDER BY rolname, key, setdatabase DESC\n"
    "  ),\n"
    "  iso_setting AS (\n"
    "    SELECT rolname, value FROM kv_settings\n"
    "    WHERE key = 'default_transaction_isolation'\n"
    "  ),\n"
    "  per_role AS (\n"
    "    SELECT kv.rolname::text AS rolname, lower(i.value) AS iso_lvl,\n"
    "      COALESCE(json_agg(json_build_array(kv.key, kv.value) ORDER BY kv.key)\n"
    "        FILTER (WHERE kv.key <> 'default_transaction_isolation'), '[]'::json) AS settings\n"
    "    FROM kv_settings kv\n"
    "    JOIN pg_settings ps ON ps.name = kv.key AND (ps.context = 'user'";
static const char role_settings_pg15[] =
    "\n      OR has_parameter_privilege(quote_ident(current_user)::regrole::oid, ps.name, 'set')";
static const char role_settings_tail[] =
    ")\n"
    "    LEFT JOIN iso_setting i ON i.rolname = kv.rolname\n"
    "    GROUP BY kv.rolname, i.value\n"
    "  )\n"
    "  SELECT json_agg(json_build_object('role', rolname, 'isolation_level', iso_lvl,\n"
    "                  'settings', settings) ORDER BY rolname) AS doc\n"
    "  FROM per_role\n"
    ")\n";
/* db-config = false: PostgREST reads no role settings. */
static const char role_settings_none[] =
    "role_settings AS (SELECT NULL::json AS doc)\n";

static const char introspect_select[] =
    "SELECT json_build_object(\n"
    "  'pg_version', current_setting('server_version_num')::integer,\n";

/* The parts of the document: key, CTE, and the name PostgREST's
 * SchemaCache.hs gives the statement that reads the same (its timing
 * GUC, pgrst.<name>, at log-level debug). */
static const struct {
    const char *key, *cte, *timing;
} doc_parts[] = {
    {"tables", "tables", "tables"},
    {"foreign_keys", "fks", "rels"},
    {"view_columns", "vcols", "keydeps"},
    {"routines", "routines", "funcs"},
    {"computed_relationships", "computed", "comprels"},
    {"representations", "representations", "dreps"},
    {"media_handlers", "media_handlers", "mhdrs"},
};

static const char introspect_tail[] =
    "  'role_settings', COALESCE((SELECT doc FROM role_settings), '[]'::json)\n"
    ")::text\n"
    "WHERE s.p IS NOT NULL\n"
    /* PostgREST casts db-schemas and db-extra-search-path to regnamespace:
     * a schema that does not exist fails the load (3F000) */
    "  AND (SELECT count(*) FROM unnest($1::text[] || $2::text[]) n\n"
    "       WHERE quote_ident(n)::regnamespace IS NOT NULL) >= 0\n"
    "    ) AS doc\n"
    "    FROM (SELECT current_setting('search_path') AS orig,\n"
    "                 set_config('search_path', '', true) AS p OFFSET 0) s\n"
    "    OFFSET 0\n"
    "  ) d OFFSET 0\n"
    ") f\n";

/* Appends one element of a PostgreSQL array literal: always quoted, with
 * '"' and '\\' escaped, so any schema name round-trips. */
static void put_array_elem(pgr_sb *sb, const char *s)
{
    pgr_sb_putc(sb, '"');
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            pgr_sb_putc(sb, '\\');
        pgr_sb_putc(sb, *p);
    }
    pgr_sb_putc(sb, '"');
}

/* NULL-terminated list -> "{\"a\",\"b\"}" (NULL list -> "{}"). */
static char *text_array_literal(pgrest_arena *a, const char *const *items)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_putc(&sb, '{');
    for (size_t i = 0; items != NULL && items[i] != NULL; i++) {
        if (i > 0)
            pgr_sb_putc(&sb, ',');
        put_array_elem(&sb, items[i]);
    }
    pgr_sb_putc(&sb, '}');
    return pgr_sb_finish(&sb);
}

static int schema_cache_error(pgrest_error *err, pgrest_arena *a,
                              const char *details)
{
    return pgr_error_no_schema_cache(err, details != NULL ? pgr_strdup(a, details) : NULL);
}

/* Copies the single text value of res into the arena. */
static int take_document(PGconn *conn, PGresult *res, pgrest_arena *a, char **json_out,
                         pgrest_error *err)
{
    /* the error itself, as PostgREST's SchemaCacheErrorObs shows it */
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        return pgr_db_query_error(a, conn, res, err);
    if (PQntuples(res) != 1 || PQnfields(res) != 1 || PQgetisnull(res, 0, 0))
        return schema_cache_error(err, a, "unexpected introspection result");
    int len = PQgetlength(res, 0, 0);
    char *doc = pgr_strndup(a, PQgetvalue(res, 0, 0), (size_t)len);
    if (doc == NULL)
        return pgr_error_oom(err);
    *json_out = doc;
    return PGREST_OK;
}

/* One part of the document's json_build_object. Timed, it is enclosed in
 * SchemaCache.hs sqlTimedStatement's two set_config calls (local to the
 * loader's transaction, as there: pgr_introspect_timings reads them in the
 * same transaction); the arguments are evaluated in order, each part's
 * CTEs when first read. */
static void put_part(pgr_sb *sb, pgrest_arena *a, size_t i, bool timed)
{
    const char *g = doc_parts[i].timing;
    if (timed)
        pgr_sb_puts(sb, pgr_asprintf(a, "  '_start_%s', set_config('pgrst.%s', "
                                        "clock_timestamp()::text, true),\n", g, g));
    pgr_sb_puts(sb, pgr_asprintf(a, "  '%s', COALESCE((SELECT doc FROM %s), '[]'::json),\n",
                                 doc_parts[i].key, doc_parts[i].cte));
    if (timed)
        pgr_sb_puts(sb, pgr_asprintf(a, "  '_end_%s', set_config('pgrst.%s', (clock_timestamp()"
                                        " - current_setting('pgrst.%s', false)::timestamptz)"
                                        "::text, true),\n", g, g, g));
}

/* The statement for this server and these options (see the top). */
static const char *statement_text(pgrest_arena *a, PGconn *conn,
                                  bool role_settings, bool timed)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, sizeof introspect_head + sizeof introspect_tail + 2048);
    pgr_sb_puts(&sb, introspect_head);
    if (!role_settings)
        pgr_sb_puts(&sb, role_settings_none);
    else {
        pgr_sb_puts(&sb, role_settings_head);
        if (PQserverVersion(conn) >= 150000)
            pgr_sb_puts(&sb, role_settings_pg15);
        pgr_sb_puts(&sb, role_settings_tail);
    }
    pgr_sb_puts(&sb, introspect_select);
    for (size_t i = 0; i < sizeof doc_parts / sizeof doc_parts[0]; i++)
        put_part(&sb, a, i, timed);
    pgr_sb_puts(&sb, introspect_tail);
    return pgr_sb_finish(&sb);
}

/* PostgREST's default db-hoisted-tx-settings. */
static const char *const default_hoisted[] = {
    "statement_timeout", "plan_filter.statement_cost_limit",
    "default_transaction_isolation", NULL,
};

int pgr_introspect(void *pgconn, const pgr_introspect_opts *opts,
                   pgrest_arena *a, char **json_out, pgrest_error *err)
{
    PGconn *conn = pgconn;
    *json_out = NULL;
    if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
        return schema_cache_error(err, a, conn != NULL ? PQerrorMessage(conn)
                                                       : "no connection");
    const char *params[3];
    params[0] = text_array_literal(a, opts->schemas);
    params[1] = text_array_literal(a, opts->extra_search_path);
    params[2] = text_array_literal(a, opts->hoisted_settings != NULL
                                          ? opts->hoisted_settings
                                          : default_hoisted);
    const char *sql = statement_text(a, conn, opts->role_settings, opts->timings);
    if (params[0] == NULL || params[1] == NULL || params[2] == NULL || sql == NULL)
        return pgr_error_oom(err);
    /* 1009 = text[]; the result is requested as text. */
    const Oid types[3] = {1009, 1009, 1009};
    PGresult *res = PQexecParams(conn, sql, 3, types, params, NULL, NULL, 0);
    if (res == NULL)
        return schema_cache_error(err, a, PQerrorMessage(conn));
    int rc = take_document(conn, res, a, json_out, err);
    PQclear(res);
    return rc;
}

/* The role_settings CTE alone, for a config reload. */
static const char role_settings_select[] =
    "SELECT COALESCE((SELECT doc FROM role_settings), '[]'::json)::text";

int pgr_introspect_role_settings(void *pgconn, pgrest_arena *a, char **json_out,
                                 pgrest_error *err)
{
    PGconn *conn = pgconn;
    *json_out = NULL;
    if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
        return schema_cache_error(err, a, conn != NULL ? PQerrorMessage(conn)
                                                       : "no connection");
    pgr_sb sb;
    pgr_sb_init(&sb, a, sizeof role_settings_head + 1024);
    pgr_sb_puts(&sb, "WITH ");
    pgr_sb_puts(&sb, role_settings_head);
    if (PQserverVersion(conn) >= 150000)
        pgr_sb_puts(&sb, role_settings_pg15);
    pgr_sb_puts(&sb, role_settings_tail);
    pgr_sb_puts(&sb, role_settings_select);
    const char *sql = pgr_sb_finish(&sb);
    if (sql == NULL)
        return pgr_error_oom(err);
    PGresult *res = PQexec(conn, sql);
    if (res == NULL)
        return schema_cache_error(err, a, PQerrorMessage(conn));
    int rc = take_document(conn, res, a, json_out, err);
    PQclear(res);
    return rc;
}

/* SchemaCache.hs extractTimings after a timed pgr_introspect on the same
 * connection, as Logger.hs prints SchemaCacheQueriedObs's second line:
 * "tables: 1.234 ms, keydeps: ..., mhdrs: ... ms" in PostgREST's order. */
int pgr_introspect_timings(void *pgconn, pgrest_arena *a, char **line_out,
                           pgrest_error *err)
{
    static const char *const order[] = {"tables", "keydeps", "rels", "funcs",
                                        "comprels", "dreps", "mhdrs"};
    PGconn *conn = pgconn;
    *line_out = NULL;
    pgr_sb q;
    pgr_sb_init(&q, a, 512);
    pgr_sb_puts(&q, "SELECT ");
    for (size_t i = 0; i < 7; i++)
        pgr_sb_puts(&q, pgr_asprintf(a, "%sextract('milliseconds' from current_setting("
                                        "'pgrst.%s', false)::interval)::text",
                                     i > 0 ? "," : "", order[i]));
    const char *sql = pgr_sb_finish(&q);
    if (sql == NULL)
        return pgr_error_oom(err);
    PGresult *res = PQexec(conn, sql);
    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
        int rc = res != NULL ? pgr_db_query_error(a, conn, res, err)
                             : schema_cache_error(err, a, PQerrorMessage(conn));
        PQclear(res);
        return rc;
    }
    pgr_sb line;
    pgr_sb_init(&line, a, 256);
    for (int i = 0; i < 7; i++)
        pgr_sb_puts(&line, pgr_asprintf(a, "%s%s: %s ms", i > 0 ? ", " : "", order[i],
                                        PQgetvalue(res, 0, i)));
    PQclear(res);
    *line_out = (char *)pgr_sb_finish(&line);
    return *line_out != NULL ? PGREST_OK : pgr_error_oom(err);
}
