// Prints every row of parquet files as one JSON object per line, as DuckDB reads them
// (to_json of the whole row). The Go test decides what is right; this script only reads.
//
// usage: node duckdb_rows.mjs FILE...
import { DuckDBInstance } from '@duckdb/node-api';

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const lit = (s) => "'" + s.replaceAll("'", "''") + "'";

for (const file of process.argv.slice(2)) {
  const r = await con.runAndReadAll(`SELECT to_json(t)::VARCHAR AS j FROM read_parquet(${lit(file)}) t`);
  for (const row of r.getRowObjectsJson()) {
    process.stdout.write(row.j + '\n');
  }
}
