// Times DuckDB writing the rows of a JSON Lines file as a zstd parquet file, for the
// comparison benchmark. Prints {"seconds": S} (the COPY alone, not start-up).
//
// usage: node duckdb_write.mjs IN.jsonl OUT.parquet
import { DuckDBInstance } from '@duckdb/node-api';

const [input, output] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const lit = (s) => "'" + s.replaceAll("'", "''") + "'";
const t0 = process.hrtime.bigint();
await con.run(`COPY (SELECT * FROM read_json(${lit(input)}, format = 'newline_delimited', maximum_object_size = 268435456)) TO ${lit(output)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1000)`);
const t1 = process.hrtime.bigint();
process.stdout.write(JSON.stringify({ seconds: Number(t1 - t0) / 1e9 }));
