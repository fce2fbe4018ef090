'use strict';

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 6 },
];

function parseField(text, field) {
  const values = new Set();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) {
      throw new Error(`invalid step "${stepText}" in ${field.name}`);
    }
    let lo;
    let hi;
    if (range === '*') {
      lo = field.min;
      hi = field.max;
    } else if (range.includes('-')) {
      [lo, hi] = range.split('-').map(Number);
    } else {
      lo = Number(range);
      hi = stepText === undefined ? lo : field.max;
    }
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || lo < field.min || hi > field.max || lo > hi) {
      throw new Error(`invalid ${field.name} "${part}" (allowed ${field.min}-${field.max})`);
    }
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return [...values].sort((a, b) => a - b);
}

function parseCron(expression) {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) {
    throw new Error(`expected 5 fields, got ${parts.length}: "${expression}"`);
  }
  const schedule = {};
  FIELDS.forEach((field, i) => {
    schedule[field.name] = parseField(parts[i], field);
  });
  return schedule;
}

function nextRuns(schedule, from, count) {
  const runs = [];
  const t = new Date(from.getTime());
  t.setUTCSeconds(0, 0);
  t.setUTCMinutes(t.getUTCMinutes() + 1);
  const limit = 366 * 24 * 60; // one year of minutes
  for (let i = 0; i < limit && runs.length < count; i++) {
    if (
      schedule.minute.includes(t.getUTCMinutes()) &&
      schedule.hour.includes(t.getUTCHours()) &&
      schedule['day of month'].includes(t.getUTCDate()) &&
      schedule.month.includes(t.getUTCMonth() + 1) &&
      schedule['day of week'].includes(t.getUTCDay())
    ) {
      runs.push(new Date(t.getTime()));
    }
    t.setUTCMinutes(t.getUTCMinutes() + 1);
  }
  return runs;
}

module.exports = { parseCron, nextRuns, FIELDS };
