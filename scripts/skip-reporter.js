'use strict';
// A reporter for `node --test` (scripts/test-node.js adds it beside the
// usual one): a JSON line per test that ran or was skipped, `{ file,
// reason }`, reason null for a test that ran, for scripts/skipped.js to
// count and group at the end of the run. Suites are not counted.

module.exports = async function* skipReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    if (data.details && data.details.type === 'suite') continue;
    const skipped = data.skip !== undefined && data.skip !== false;
    yield `${JSON.stringify({ file: data.file ?? null, reason: skipped ? (data.skip === true ? null : String(data.skip)) : undefined, skipped })}\n`;
  }
};
