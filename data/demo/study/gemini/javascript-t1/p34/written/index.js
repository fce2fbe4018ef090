#!/usr/bin/env node
'use strict';

const fs = require('fs');
const { htmlToText } = require('./src/HtmlConverter');

const file = process.argv[2];
if (!file) {
  console.error('usage: node index.js FILE.html');
  process.exit(64);
}
console.log(htmlToText(fs.readFileSync(file, 'utf8')));
