#!/usr/bin/env node
'use strict';

// The `condense-native` command (package.json "bin"). The CLI lives in
// cli/, beside the library it drives; this file only starts it and sets
// the exit status.

require('../cli/main.js')
  .main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`condense-native: internal error: ${e && e.stack ? e.stack : e}\n`);
      process.exitCode = 2;
    },
  );
