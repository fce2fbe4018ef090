#!/usr/bin/env node
'use strict';

const program = require('commander');
const { parseCron, nextRuns, FIELDS } = require('./src/cron');

program
  .name('cronparse')
  .description('Explain a cron expression and list its next run times (UTC)')
  .option('-e, --expr <expression>', 'cron expression with 5 fields')
  .option('-n, --count <n>', 'number of run times to list', '5')
  .option('-f, --from <iso-date>', 'start time (ISO 8601)', new Date().toISOString())
  .parse(process.argv);

try {
  const schedule = parseCron(program.expr);
  for (const field of FIELDS) {
    console.log(`${field.name.padEnd(13)} ${schedule[field.name].join(',')}`);
  }
  console.log('next runs:');
  for (const run of nextRuns(schedule, new Date(program.from), Number(program.count))) {
    console.log(`  ${run.toISOString()}`);
  }
} catch (err) {
  if (err instanceof TypeError) throw err;
  console.error(`error: ${err.message}`);
  process.exit(1);
}
