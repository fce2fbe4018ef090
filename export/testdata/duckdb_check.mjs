// Reads parquet files with DuckDB and reports what it sees, as JSON on stdout. The Go test
// (duckdb_test.go) decides what is right; this script only reports.
//
// usage: node duckdb_check.mjs FILE...
import { DuckDBInstance } from '@duckdb/node-api';

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
const lit = (s) => "'" + s.replaceAll("'", "''") + "'";
const ident = (s) => '"' + s.replaceAll('"', '""') + '"';

const out = {};
for (const file of process.argv.slice(2)) {
  const src = `read_parquet(${lit(file)})`;
  const cols = await q(`DESCRIBE SELECT * FROM ${src}`);
  const rows = Number((await q(`SELECT count(*) AS n FROM ${src}`))[0].n);
  const nulls = {};
  for (const c of cols) {
    const r = await q(`SELECT count(*) - count(${ident(c.column_name)}) AS n FROM ${src}`);
    nulls[c.column_name] = Number(r[0].n);
  }
  const schema = await q(`SELECT name, repetition_type FROM parquet_schema(${lit(file)})`);
  const meta = await q(`SELECT row_group_id, row_group_num_rows, path_in_schema, encodings, compression FROM parquet_metadata(${lit(file)})`);
  const groups = {};
  const encodings = new Set();
  const compressions = new Set();
  for (const m of meta) {
    groups[m.row_group_id] = Number(m.row_group_num_rows);
    for (const e of String(m.encodings).split(',')) encodings.add(e.trim());
    compressions.add(String(m.compression));
  }
  const info = {
    rows,
    columns: cols.map((c) => ({ name: c.column_name, type: c.column_type })),
    nulls,
    repetition: Object.fromEntries(schema.filter((s) => s.repetition_type).map((s) => [s.name, s.repetition_type])),
    row_groups: Object.values(groups),
    encodings: [...encodings].sort(),
    compressions: [...compressions].sort(),
  };
  const names = cols.map((c) => c.column_name);
  if (names.includes('gold_files')) {
    const r = await q(`SELECT count(*) AS n FROM (SELECT unnest(gold_files) AS g FROM ${src}) WHERE g.content IS NULL`);
    info.gold_null_contents = Number(r[0].n);
  }
  if (names.includes('problem_statement')) {
    const r = await q(`SELECT instance_id, problem_statement FROM ${src} ORDER BY instance_id`);
    info.problem_statements = Object.fromEntries(r.map((x) => [x.instance_id, x.problem_statement]));
  }
  out[file] = info;
}
process.stdout.write(JSON.stringify(out));
