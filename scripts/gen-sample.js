#!/usr/bin/env node
'use strict';
// Generates sample/session.json: a synthetic pi coding-agent session with a
// pi-condense pruning state, in the corpus file format
// ({messages, state, config, thinkingBoundaryTimestamp, meta}).
// Every text is assembled from the word lists and templates in this file and
// the output depends only on SEED, so two runs write identical bytes.
//
//   node scripts/gen-sample.js           write sample/session.json
//   node scripts/gen-sample.js --check   exit 1 if the committed file differs

const fs = require('node:fs');
const path = require('node:path');

const SEED = 20260309;
const GENERATOR = 'condense-native/gen-sample@1';
const OUT_FILE = path.join(__dirname, '..', 'sample', 'session.json');

const PROJECT_ROOT = '/home/dev/ledgerline';
const SESSION_ID = '5b0e9c2a-71d4-4f3e-8a26-c94e1d07b3f8';
const SPILL_DIR = `/home/dev/.pi/agent/sessions/--home-dev-ledgerline--/${SESSION_ID}-blobs`;
const MODEL = 'claude-sonnet-4-5';
// US dollars per million tokens.
const PRICES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const SYSTEM_PROMPT_TOKENS = 4650;
const START_MS = Date.UTC(2026, 2, 9, 8, 41, 17, 312);

// Shape of the pruning state, as pi-condense's indexer would leave it.
const PENDING_TURNS = 6; // newest assistant turns came after the last flush
const ROLLING_WINDOW = 3; // newest closed chains stay raw
const SPILL_MIN_BYTES = 6144;
const PREVIEW_MAX_BYTES = 2048;
const BOUNDARY_FRACTION = 0.45; // where the persisted thinking frontier sits

const CONFIG = {
  chainCompression: { enabled: true, stripFinalAssistantThinking: true },
  errorPurge: { enabled: true, cooldownTurns: 2, minArgChars: 500 },
  thinkingStrip: { enabled: true, keepLastTurns: 16 },
  protection: { protectedTools: ['todo_write'], protectedPaths: ['**/skills/**/*.md'] },
  recoveryGraceTurns: 3,
};

// ---------------------------------------------------------------------------
// Seeded randomness

function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  constructor(seed) {
    this.next = mulberry32(seed);
  }
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick(list) {
    return list[Math.floor(this.next() * list.length)];
  }
  chance(p) {
    return this.next() < p;
  }
  chars(alphabet, n) {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }
  sample(list, n) {
    const pool = list.slice();
    const out = [];
    while (out.length < n && pool.length) out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0]);
    return out;
  }
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const HEX = '0123456789abcdef';

function base64(rng, nChars) {
  const bytes = Buffer.alloc(Math.ceil((nChars * 3) / 4));
  for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(0, 255);
  return bytes.toString('base64');
}

function utf8Bytes(s) {
  return Buffer.byteLength(s, 'utf8');
}

function clock(ms) {
  return new Date(ms).toISOString().slice(11, 19);
}

function fill(template, vars) {
  return template.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? vars[k] : m));
}

// ---------------------------------------------------------------------------
// Word lists

const VERBS = ['parse', 'normalize', 'detect', 'split', 'format', 'resolve', 'collect', 'merge', 'measure',
  'group', 'sum', 'clamp', 'pad', 'sort', 'coerce', 'validate', 'tally', 'read'];
const NOUNS = ['Amount', 'Row', 'Dialect', 'Header', 'Ledger', 'Entry', 'Category', 'Column', 'Cell', 'Locale',
  'Month', 'Total', 'Field', 'Separator', 'Currency', 'Range', 'Width', 'Budget', 'Merchant', 'Memo'];
const VARS = ['row', 'cells', 'entry', 'header', 'totals', 'month', 'width', 'text', 'value', 'parts', 'acc',
  'line', 'cursor', 'bucket', 'label', 'limit'];
const METHODS = ['trim()', 'split(sep)', 'map(String)', 'filter(Boolean)', 'slice(1)', 'toUpperCase()',
  'normalize("NFC")', 'padEnd(width)', 'at(-1)', 'join(" ")'];
const COMMENTS = [
  'keep the original order so diffs of the report stay readable',
  'exports from some banks end with an empty line; ignore it',
  'the header row is optional in the older export format',
  'amounts are kept in cents to avoid float drift',
  'a quoted cell may contain the separator itself',
  'locale-specific month names are resolved later',
  'width is measured in terminal columns, not code units',
  'unknown categories fall back to "Other"',
  'memo fields may contain line separators; treat them as spaces',
];
const TEST_SUBJECTS = ['parseAmount', 'detectDialect', 'parseStatement', 'monthlyReport', 'displayWidth',
  'renderTable', 'categorize', 'cli report', 'parseIsoDate', 'formatCents'];
const TEST_VERBS = ['handles', 'rejects', 'keeps', 'ignores', 'reads', 'rounds', 'sorts', 'pads', 'reports'];
const TEST_OBJECTS = ['negative amounts', 'thousands separators', 'quoted separators', 'empty lines', 'a BOM prefix',
  'CRLF line endings', 'comma decimals', 'a trailing currency sign', 'full-width digits', 'combining accents',
  'emoji merchants', 'month boundaries', 'leap days', 'unknown categories', 'parenthesised negatives',
  'narrow no-break spaces', 'duplicate headers', 'an empty file', 'mixed currencies', 'memo line breaks'];
const MERCHANTS_FR = ['BOULANGERIE DU PORT', 'PHARMACIE CENTRALE', 'LIBRAIRIE LES MOTS', 'CAFÉ DE LA GARE',
  'TRAIN RÉGIONAL', 'ÉPICERIE FINE NOÉMIE', 'MARCHÉ COUVERT', 'CINÉMA LE PHARE', 'GARAGE DES ÉCLUSES',
  'FROMAGERIE MONTAGNE', 'PISCINE MUNICIPALE', 'QUINCAILLERIE BÉRANGER'];
const MERCHANTS_JP = ['ラーメン一番', '東京書店', 'コンビニ 7号店', 'カフェ🍵 ミドリ', '駅前パン屋', '花屋 さくら',
  'ＳＵＰＥＲ ＭＡＲＴ', '薬局 みなみ', 'タクシー 🚕', '文房具 ヤマ'];
const CATEGORIES = ['Food', 'Transport', 'Books', 'Health', 'Leisure', 'Home', 'Salary', 'Other'];

const THINK_OPEN = [
  'Let me think about {topic}.',
  'Before editing anything I want to be clear on {topic}.',
  'Next question: {topic}.',
  'Reading the request again, what matters now is {topic}.',
  'Quick check of my assumptions about {topic}.',
];
const THINK_MIDDLE = [
  '{file} is the obvious place, but {other} also reaches it through {fn}.',
  'If I change {fn} in place, the callers in {other} keep working because the signature stays the same.',
  'The tests only cover the happy path, so a regression in {fn} would go unnoticed.',
  'There is a subtle issue: {detail}.',
  'I should keep the diff small; the request is about {goal}, not a refactor.',
  'One more thing to keep in mind: {detail}.',
  '{fn} returns early on an empty input, which hides the problem in the fixture.',
  'The fixture is small enough to reason about by hand, so I can predict the totals.',
  'I could add a flag for this, but detecting it from the data is friendlier.',
  'The existing naming uses camelCase everywhere under src/, so {fn} fits.',
];
const THINK_CLOSE = [
  'Plan: look at {file} first, then make the edit.',
  'Let me check the tests before changing code.',
  'I will run the suite right after the edit.',
  'Next step: {file}.',
  'That should be enough to proceed.',
];
const DETAILS = [
  "Number('1 234,56') is NaN, so the failure stays silent until the total is printed",
  'a trailing separator produces an empty last column',
  'the BOM at the start of the export shifts the first header by one character',
  'Math.round on a float that came from 0.075 * 100 rounds down',
  'String.length counts UTF-16 code units, not terminal columns',
  'an emoji followed by a variation selector is two columns wide, not three',
  'French exports use a narrow no-break space (U+202F) as the thousands separator',
  'dates in the export are DD/MM/YYYY while the CLI takes ISO dates',
  'new Date("2025-03-01") is UTC but new Date(2025, 2, 1) is local time',
  'the category table is matched case-insensitively but the keys are stored upper-case',
];
const GOALS = ['the French export', 'the --since option', 'the category breakdown', 'the release',
  'column alignment', 'rounding', 'a green test suite'];

// ---------------------------------------------------------------------------
// The project the agent works on: a virtual file system of synthetic sources

function tsFunction(rng, name, nLines) {
  const param = rng.pick(VARS);
  const type = rng.pick(NOUNS);
  const ret = rng.pick(NOUNS);
  const lines = [`export function ${name}(${param}: ${type}, opts: Partial<${ret}Options> = {}): ${ret}[] {`];
  const acc = rng.pick(['acc', 'out', 'result', 'rows']);
  lines.push(`  const ${acc}: ${ret}[] = [];`);
  let depth = 1;
  for (let i = 0; i < nLines; i++) {
    const ind = '  '.repeat(depth);
    const v = rng.pick(VARS);
    const roll = rng.int(0, 9);
    if (roll === 0) lines.push(`${ind}// ${rng.pick(COMMENTS)}`);
    else if (roll <= 2) lines.push(`${ind}const ${v}${i} = ${param}.${rng.pick(METHODS)};`);
    else if (roll === 3) lines.push(`${ind}if (${param}.${v} === undefined) ${depth > 1 ? 'continue' : `return ${acc}`};`);
    else if (roll === 4 && depth < 3) {
      lines.push(`${ind}for (const ${v} of ${param}.${rng.pick(['cells', 'rows', 'entries', 'parts'])}) {`);
      depth++;
    } else if (roll === 5 && depth > 1) {
      depth--;
      lines.push(`${'  '.repeat(depth)}}`);
    } else if (roll === 6) lines.push(`${ind}${acc}.push(${rng.pick(VERBS)}${rng.pick(NOUNS)}(${v}, opts));`);
    else if (roll === 7) lines.push(`${ind}opts.${v} ??= ${rng.int(0, 64)};`);
    else if (roll === 8) lines.push(`${ind}const ${v}Key = \`\${${param}.id}:\${opts.${v} ?? '-'}\`;`);
    else lines.push(`${ind}${v}${i}?.set(${JSON.stringify(rng.pick(NOUNS).toLowerCase())}, ${rng.int(1, 999)});`);
  }
  while (depth > 1) {
    depth--;
    lines.push(`${'  '.repeat(depth)}}`);
  }
  lines.push(`  return ${acc};`, '}');
  return lines.join('\n');
}

function helpers(rng, count, used) {
  const out = [];
  for (let i = 0; i < count; i++) {
    let name;
    do name = rng.pick(VERBS) + rng.pick(NOUNS) + (rng.chance(0.3) ? rng.pick(['s', 'At', 'By', 'Or']) : '');
    while (used.has(name));
    used.add(name);
    out.push(tsFunction(rng, name, rng.int(6, 18)));
  }
  return out.join('\n\n');
}

function initialFiles(rng) {
  const used = new Set(['parseAmount', 'detectDialect', 'parseStatement', 'displayWidth', 'renderTable']);
  const files = new Map();
  files.set('package.json', JSON.stringify({
    name: 'ledgerline',
    version: '0.3.2',
    description: 'Monthly reports from bank statement exports',
    type: 'module',
    bin: { ledgerline: 'dist/cli.js' },
    scripts: { build: 'tsc -p tsconfig.json', test: 'vitest run', lint: 'eslint src test' },
    devDependencies: { '@types/node': '^22.10.0', eslint: '^9.17.0', typescript: '^5.7.2', vitest: '^2.1.8' },
  }, null, 2) + '\n');
  files.set('tsconfig.json', JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true,
      outDir: 'dist', rootDir: 'src', declaration: true },
    include: ['src'],
  }, null, 2) + '\n');
  files.set('README.md', [
    '# ledgerline',
    '',
    'Turns bank statement exports (CSV) into monthly reports. Runs offline and',
    'never asks for account credentials.',
    '',
    '## Usage',
    '',
    '    ledgerline report --month 2025-03 statements/*.csv',
    '    ledgerline categories --list',
    '',
    'Supported exports: generic CSV with a header row. Accented merchant names',
    '(« Café de la Gare ») are kept as-is; see `src/i18n/messages.ts` for the',
    'labels shown in English, French and Japanese (日本語).',
    '',
  ].join('\n'));
  files.set('src/index.ts', [
    "export { parseStatement } from './parser/csv.js';",
    "export { parseAmount } from './parser/amount.js';",
    "export { monthlyReport } from './report/monthly.js';",
    "export type { Transaction } from './model/transaction.js';",
    '',
  ].join('\n'));
  files.set('src/parser/dialect.ts', [
    'export interface Dialect {',
    '  separator: string;',
    '  decimal: string;',
    '  currency: string;',
    '}',
    '',
    "export const DEFAULT_DIALECT: Dialect = { separator: ',', decimal: '.', currency: 'USD' };",
    '',
    'export function detectDialect(headerLine: string): Dialect {',
    "  const commas = headerLine.split(',').length;",
    "  if (commas > 1) return DEFAULT_DIALECT;",
    '  return DEFAULT_DIALECT;',
    '}',
    '',
  ].join('\n'));
  files.set('src/parser/amount.ts', [
    "import type { Dialect } from './dialect.js';",
    '',
    'export interface Amount {',
    '  cents: number;',
    '  currency: string;',
    '}',
    '',
    "const CURRENCY_SIGNS: Record<string, string> = { '€': 'EUR', '$': 'USD', '£': 'GBP', '¥': 'JPY' };",
    '',
    'export function parseAmount(raw: string, dialect: Dialect): Amount {',
    '  let text = raw.trim();',
    '  let currency = dialect.currency;',
    '  for (const [sign, code] of Object.entries(CURRENCY_SIGNS)) {',
    '    if (text.startsWith(sign) || text.endsWith(sign)) {',
    '      currency = code;',
    "      text = text.replace(sign, '').trim();",
    '    }',
    '  }',
    "  const negative = text.startsWith('-') || text.startsWith('(');",
    "  const digits = text.replace(/[()\\-+\\s]/g, '');",
    '  const value = Number(digits);',
    '  if (Number.isNaN(value)) {',
    '    throw new RangeError(`unparseable amount: ${raw}`);',
    '  }',
    '  const cents = Math.round(value * 100);',
    '  return { cents: negative ? -cents : cents, currency };',
    '}',
    '',
    'export function formatCents(cents: number, currency: string): string {',
    "  const sign = cents < 0 ? '-' : '';",
    '  const abs = Math.abs(cents);',
    "  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${currency}`;",
    '}',
    '',
  ].join('\n'));
  files.set('src/parser/csv.ts', [
    "import { parseAmount } from './amount.js';",
    "import { DEFAULT_DIALECT, type Dialect } from './dialect.js';",
    "import type { Transaction } from '../model/transaction.js';",
    '',
    'export interface ParseOptions {',
    '  dialect?: Dialect;',
    '  skipHeader?: boolean;',
    '}',
    '',
    'export function parseStatement(text: string, options: ParseOptions = {}): Transaction[] {',
    "  const lines = text.replace(/^\\uFEFF/, '').split(/\\r?\\n/).filter((l) => l.trim() !== '');",
    '  const dialect = options.dialect ?? DEFAULT_DIALECT;',
    '  const rows = options.skipHeader === false ? lines : lines.slice(1);',
    '  return rows.map((line, index) => {',
    '    const cells = splitCells(line, dialect.separator);',
    '    const [date, label, amount] = cells;',
    '    return { index, date, label: label.trim(), amount: parseAmount(amount, dialect) };',
    '  });',
    '}',
    '',
    'function splitCells(line: string, separator: string): string[] {',
    '  const cells: string[] = [];',
    "  let current = '';",
    '  let quoted = false;',
    '  for (const ch of line) {',
    "    if (ch === '\"') quoted = !quoted;",
    '    else if (ch === separator && !quoted) {',
    '      cells.push(current);',
    "      current = '';",
    '    } else current += ch;',
    '  }',
    '  cells.push(current);',
    '  return cells;',
    '}',
    '',
    helpers(rng, 8, used),
    '',
  ].join('\n'));
  files.set('src/model/transaction.ts', [
    "import type { Amount } from '../parser/amount.js';",
    '',
    'export interface Transaction {',
    '  index: number;',
    '  date: string;',
    '  label: string;',
    '  amount: Amount;',
    '  category?: string;',
    '}',
    '',
    'export function monthOf(tx: Transaction): string {',
    '  const d = new Date(tx.date);',
    "  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}`;",
    '}',
    '',
  ].join('\n'));
  files.set('src/cli.ts', [
    '#!/usr/bin/env node',
    "import { readFileSync } from 'node:fs';",
    "import { parseStatement } from './parser/csv.js';",
    "import { monthlyReport, type ReportOptions } from './report/monthly.js';",
    "import { renderTable } from './report/table.js';",
    '',
    'function main(argv: string[]): number {',
    '  const [command, ...rest] = argv;',
    "  if (command !== 'report') {",
    "    console.error('usage: ledgerline report --month YYYY-MM <file...>');",
    '    return 2;',
    '  }',
    '  const options: ReportOptions = {};',
    '  const files: string[] = [];',
    '  for (let i = 0; i < rest.length; i++) {',
    "    if (rest[i] === '--month') options.month = rest[++i];",
    '    else files.push(rest[i]);',
    '  }',
    "  const txs = files.flatMap((f) => parseStatement(readFileSync(f, 'utf8')));",
    '  console.log(renderTable(monthlyReport(txs, options)));',
    '  return 0;',
    '}',
    '',
    'process.exitCode = main(process.argv.slice(2));',
    '',
  ].join('\n'));
  files.set('src/report/monthly.ts', [
    "import { monthOf, type Transaction } from '../model/transaction.js';",
    "import { categorize } from '../categories.js';",
    '',
    'export interface ReportOptions {',
    '  month?: string;',
    '}',
    '',
    'export interface ReportRow {',
    '  month: string;',
    '  category: string;',
    '  label: string;',
    '  cents: number;',
    '  currency: string;',
    '}',
    '',
    'export function monthlyReport(txs: Transaction[], options: ReportOptions = {}): ReportRow[] {',
    '  return txs',
    '    .filter((tx) => !options.month || monthOf(tx) === options.month)',
    '    .map((tx) => ({',
    '      month: monthOf(tx),',
    '      category: categorize(tx.label),',
    '      label: tx.label,',
    '      cents: tx.amount.cents,',
    '      currency: tx.amount.currency,',
    '    }));',
    '}',
    '',
    helpers(rng, 6, used),
    '',
  ].join('\n'));
  files.set('src/report/width.ts', [
    '// Terminal width of a string, used to pad report columns.',
    'export function displayWidth(text: string): number {',
    '  return text.length;',
    '}',
    '',
    'export function padDisplay(text: string, width: number): string {',
    "  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));",
    '}',
    '',
  ].join('\n'));
  files.set('src/report/table.ts', [
    "import type { ReportRow } from './monthly.js';",
    "import { formatCents } from '../parser/amount.js';",
    "import { displayWidth, padDisplay } from './width.js';",
    '',
    "const HEADERS = ['Month', 'Category', 'Merchant', 'Amount'];",
    '',
    'export function renderTable(rows: ReportRow[]): string {',
    '  const cells = rows.map((r) => [r.month, r.category, r.label, formatCents(r.cents, r.currency)]);',
    '  const widths = HEADERS.map((h, i) => Math.max(displayWidth(h), ...cells.map((c) => displayWidth(c[i]))));',
    "  const line = (c: string[]) => c.map((v, i) => padDisplay(v, widths[i])).join('  ').trimEnd();",
    "  return [line(HEADERS), ...cells.map(line)].join('\\n');",
    '}',
    '',
    helpers(rng, 5, used),
    '',
  ].join('\n'));
  const catLines = ['const RULES: Array<[RegExp, string]> = ['];
  const catPairs = [['BOULANGERIE|ÉPICERIE|FROMAGERIE|MARCHÉ|ラーメン|パン|CAFÉ|カフェ', 'Food'],
    ['TRAIN|TAXI|タクシー|GARAGE', 'Transport'], ['LIBRAIRIE|書店|文房具', 'Books'],
    ['PHARMACIE|薬局', 'Health'], ['CINÉMA|PISCINE|花屋', 'Leisure'], ['QUINCAILLERIE', 'Home'],
    ['SALAIRE|PAYROLL', 'Salary']];
  for (const [re, cat] of catPairs) catLines.push(`  [/${re}/i, '${cat}'],`);
  catLines.push('];', '', 'export function categorize(label: string): string {',
    '  for (const [re, category] of RULES) if (re.test(label)) return category;',
    "  return 'Other';", '}', '', helpers(rng, 4, used), '');
  files.set('src/categories.ts', catLines.join('\n'));
  files.set('src/i18n/messages.ts', i18nFile(rng));
  files.set('test/parser.test.ts', testFile(rng, 'parseStatement', 40));
  files.set('test/amount.test.ts', testFile(rng, 'parseAmount', 44));
  files.set('test/report.test.ts', testFile(rng, 'monthlyReport', 20));
  files.set('test/fixtures/releve-2025-03.csv', frenchFixture(rng));
  files.set('test/fixtures/statement-jp.csv', japaneseFixture(rng));
  files.set('CHANGELOG.md', [
    '# Changelog',
    '',
    '## 0.3.2',
    '',
    '- Fix: statements with a UTF-8 BOM lost their first header.',
    '- Fix: `--month` accepted `2025-3` and matched nothing.',
    '',
    '## 0.3.1',
    '',
    '- Category rules are case-insensitive.',
    '',
    '## 0.3.0',
    '',
    '- `ledgerline report` prints a table instead of JSON.',
    '',
  ].join('\n'));
  files.set('.pi/skills/release/SKILL.md', [
    '---',
    'name: release',
    'description: Prepare a ledgerline release (changelog, version, checks).',
    '---',
    '',
    '# Release checklist',
    '',
    '1. `git status --short` must be empty before you start.',
    '2. Collect the user-visible changes since the last tag with',
    '   `git log --oneline <last-tag>..HEAD` and write them under a new',
    '   `## <version>` heading at the top of CHANGELOG.md, one line each,',
    '   prefixed with **Added**, **Changed** or **Fixed**.',
    '3. Bump the version with `npm version <version> --no-git-tag-version`.',
    '4. `npm run build && npx vitest run --reporter=verbose` must pass.',
    '5. `npm pack --dry-run` and check that only `dist/`, `README.md`,',
    '   `CHANGELOG.md` and `package.json` are listed.',
    '6. Commit as `release: v<version>` and tag `v<version>`. Do not push:',
    '   the maintainer pushes after review.',
    '',
    'Never edit a published changelog section; add a new one instead.',
    '',
  ].join('\n'));
  return files;
}

function i18nFile(rng) {
  const phrases = [
    ['Total for {month}', 'Total pour {month}', '{month}の合計'],
    ['No transactions found', 'Aucune opération trouvée', '取引が見つかりません'],
    ['Unknown category', 'Catégorie inconnue', '不明なカテゴリ'],
    ['Invalid date: {value}', 'Date invalide : {value}', '無効な日付: {value}'],
    ['Expenses', 'Dépenses', '支出'],
    ['Income', 'Revenus', '収入'],
    ['Balance carried over', 'Solde reporté', '繰越残高'],
    ['Separator detected: {value}', 'Séparateur détecté : {value}', '区切り文字を検出: {value}'],
    ['Report generated 🎉', 'Rapport généré 🎉', 'レポートを作成しました 🎉'],
    ['Column too wide, truncated', 'Colonne trop large, tronquée', '列が広すぎるため切り詰めました'],
    ['Amount could not be read', 'Montant illisible', '金額を読み取れません'],
    ['Skipped {count} empty lines', '{count} lignes vides ignorées', '空行を{count}行スキップしました'],
  ];
  const scopes = ['report', 'parser', 'cli', 'table', 'categories', 'width', 'export', 'summary'];
  const lines = ['// Labels shown to the user. Keys are stable; translations may change.',
    "export type Locale = 'en' | 'fr' | 'ja';", '',
    'export const MESSAGES: Record<string, Record<Locale, string>> = {'];
  for (const scope of scopes) {
    for (const [i, [en, fr, ja]] of phrases.entries()) {
      if (rng.chance(0.25)) continue;
      lines.push(`  '${scope}.${i}': {`, `    en: ${JSON.stringify(en)},`, `    fr: ${JSON.stringify(fr)},`,
        `    ja: ${JSON.stringify(ja)},`, '  },');
    }
  }
  lines.push('};', '', 'export function t(key: string, locale: Locale, vars: Record<string, string> = {}): string {',
    '  const template = MESSAGES[key]?.[locale] ?? key;',
    '  return template.replace(/\\{(\\w+)\\}/g, (_, k: string) => vars[k] ?? `{${k}}`);', '}', '');
  return lines.join('\n');
}

function testName(rng) {
  return `${rng.pick(TEST_VERBS)} ${rng.pick(TEST_OBJECTS)}`;
}

function testFile(rng, subject, count, extraImports = []) {
  const lines = ["import { describe, expect, it } from 'vitest';", ...extraImports, '',
    `describe('${subject}', () => {`];
  const names = new Set();
  for (let i = 0; i < count; i++) {
    let name;
    do name = testName(rng);
    while (names.has(name));
    names.add(name);
    const input = rng.pick(['1 234,56', '-4,20', '(12.00)', '0,075', '€ 3,10', '2 845,00', '7.5', '¥1,280']);
    lines.push(`  it('${name}', () => {`,
      `    const result = ${subject.replace(/ .*/, '')}(${JSON.stringify(input)});`,
      `    expect(result).toMatchSnapshot();`, '  });', '');
  }
  lines.pop();
  lines.push('});', '');
  return lines.join('\n');
}

function frenchAmount(rng) {
  const euros = rng.int(1, 3200);
  const cents = rng.int(0, 99);
  const whole = euros >= 1000 ? `${Math.floor(euros / 1000)}\u202f${String(euros % 1000).padStart(3, '0')}` : String(euros);
  return `${whole},${String(cents).padStart(2, '0')}`;
}

function frenchFixture(rng) {
  const lines = ['\ufeffDate;Libellé;Débit;Crédit;Devise'];
  for (let day = 1; day <= 31; day++) {
    const n = rng.int(0, 2);
    for (let k = 0; k < n; k++) {
      const dd = String(day).padStart(2, '0');
      if (rng.chance(0.08)) {
        lines.push(`${dd}/03/2025;VIR SALAIRE MARS;;${frenchAmount(rng)};EUR`);
      } else {
        lines.push(`${dd}/03/2025;CARTE ${rng.pick(MERCHANTS_FR)};${frenchAmount(rng)};;EUR`);
      }
    }
  }
  lines.splice(9, 0, '12/03/2025;"REMBOURSEMENT CAFÉ\u2028note : ticket perdu";;4,80;EUR');
  return lines.join('\r\n') + '\r\n';
}

function japaneseFixture(rng) {
  const lines = ['date,merchant,amount,currency'];
  for (let i = 0; i < 24; i++) {
    const day = String(1 + Math.floor(i * 1.25)).padStart(2, '0');
    lines.push(`2025-03-${day},${rng.pick(MERCHANTS_JP)},-${rng.int(180, 9800)},JPY`);
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------
// Session builder: messages in pi's shapes, with tool execution against the
// virtual file system

class Builder {
  constructor(rng) {
    this.rng = rng;
    this.now = START_MS;
    this.messages = [];
    this.files = initialFiles(rng);
    this.chains = [];
    this.turns = [];
    this.ctxChars = 0;
    this.cachedTokens = 0;
    this.refCounter = 0;
    this.firstSeen = new Map(); // toolName + output -> original call (from earlier batches)
    this.calls = new Map(); // id -> call
    this.usedIds = new Set();
    this.changed = new Map(); // path -> {add, del} since the last commit
    this.commits = [];
    this.tests = new Map();
    for (const [p, text] of this.files) if (p.startsWith('test/') && p.endsWith('.test.ts')) this.registerTests(p, text);
  }

  advance(lo, hi) {
    this.now += this.rng.int(lo, hi);
    return this.now;
  }

  push(msg) {
    this.messages.push(msg);
    this.ctxChars += JSON.stringify(msg).length;
  }

  uniqueId(prefix, n) {
    let id;
    do id = prefix + this.rng.chars(BASE58, n);
    while (this.usedIds.has(id));
    this.usedIds.add(id);
    return id;
  }

  user(text, asString = false) {
    if (this.messages.length) this.advance(45000, 260000);
    const content = asString ? text : [{ type: 'text', text }];
    this.push({ role: 'user', content, timestamp: this.now });
    this.chains.push({ userIndex: this.messages.length - 1, userTs: this.now, turns: [], finalTs: null });
  }

  thinking(text) {
    const sigLen = Math.min(4800, 240 + Math.round(text.length * (1.1 + this.rng.next())));
    return { type: 'thinking', thinking: text, thinkingSignature: 'Eu' + base64(this.rng, sigLen) };
  }

  usage(contentChars) {
    const ctxTokens = SYSTEM_PROMPT_TOKENS + Math.round(this.ctxChars / 3.8);
    const input = this.rng.int(1, 6);
    const cacheRead = this.cachedTokens;
    const cacheWrite = Math.max(0, ctxTokens - cacheRead - input);
    const output = Math.max(9, Math.round(contentChars / 3.6) + this.rng.int(0, 60));
    this.cachedTokens = cacheRead + cacheWrite;
    const cost = {
      input: (input * PRICES.input) / 1e6,
      output: (output * PRICES.output) / 1e6,
      cacheRead: (cacheRead * PRICES.cacheRead) / 1e6,
      cacheWrite: (cacheWrite * PRICES.cacheWrite) / 1e6,
      total: 0,
    };
    cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
    return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
  }

  // One assistant message plus the results of its tool calls.
  turn({ think = null, text = null, calls = [] }) {
    const chain = this.chains[this.chains.length - 1];
    const content = [];
    if (think === null && this.rng.chance(0.45)) think = this.think({}, this.rng.int(2, 4));
    if (think) content.push(this.thinking(think));
    if (text) content.push({ type: 'text', text });
    const made = calls.map((c) => ({ ...c, id: this.uniqueId('toolu_01', 22) }));
    for (const c of made) content.push({ type: 'toolCall', id: c.id, name: c.name, arguments: c.args });
    const contentChars = JSON.stringify(content).length;
    this.advance(2200 + contentChars * 4, 9000 + contentChars * 9);
    const msg = {
      role: 'assistant',
      content,
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: MODEL,
      usage: this.usage(contentChars),
      stopReason: made.length ? 'toolUse' : 'stop',
      timestamp: this.now,
      responseId: this.uniqueId('msg_01', 22),
    };
    this.push(msg);
    const turn = { index: this.turns.length, assistantIndex: this.messages.length - 1, ts: this.now, chain, calls: [] };
    this.turns.push(turn);
    chain.turns.push(turn);
    if (!made.length) chain.finalTs = this.now;
    for (const c of made) {
      const r = c.run(this);
      this.advance(...(c.slow ? [1400, 9000] : [25, 700]));
      const result = { role: 'toolResult', toolCallId: c.id, toolName: c.name, content: [{ type: 'text', text: r.text }] };
      if (r.details) result.details = r.details;
      result.isError = !!r.isError;
      result.timestamp = this.now;
      this.push(result);
      const call = { id: c.id, name: c.name, args: c.args, text: r.text, isError: !!r.isError, turn, resultIndex: this.messages.length - 1 };
      turn.calls.push(call);
      this.calls.set(c.id, call);
    }
    // Output-level dedup and refs, in call order (pending turns drop theirs later).
    for (const call of turn.calls) {
      const key = call.name + '\u0000' + call.text;
      const orig = call.isError || call.name === 'context_tree_query' || isProtected(call.name, call.args) ? null : this.firstSeen.get(key);
      if (orig) call.dupOf = orig.id;
      else call.ref = `t${++this.refCounter}`;
    }
    for (const call of turn.calls) {
      const key = call.name + '\u0000' + call.text;
      if (!call.dupOf && !call.isError && !this.firstSeen.has(key)) this.firstSeen.set(key, call);
    }
    return turn;
  }

  answer(think, text) {
    return this.turn({ think, text });
  }

  // Synthetic thinking text.
  think(vars, sentences = 4) {
    const v = { topic: 'the parser', file: 'src/parser/csv.ts', other: 'src/cli.ts', fn: 'parseStatement',
      goal: this.rng.pick(GOALS), detail: this.rng.pick(DETAILS), ...vars };
    const parts = [fill(this.rng.pick(THINK_OPEN), v)];
    const middles = this.rng.sample(THINK_MIDDLE, Math.max(1, sentences - 2));
    for (const m of middles) parts.push(fill(m, { ...v, detail: this.rng.pick(DETAILS) }));
    parts.push(fill(this.rng.pick(THINK_CLOSE), v));
    return parts.join(this.rng.chance(0.4) ? '\n\n' : ' ');
  }

  // ---- files, tests, git -------------------------------------------------

  registerTests(p, text) {
    const names = [];
    let describe = p;
    for (const line of text.split('\n')) {
      const d = /describe\('([^']+)'/.exec(line);
      if (d) describe = d[1];
      const m = /^\s*it\('([^']+)'/.exec(line);
      if (m) names.push(`${describe} > ${m[1]}`);
    }
    this.tests.set(p, names);
  }

  noteChange(p, add, del) {
    const c = this.changed.get(p) || { add: 0, del: 0, isNew: !this.files.has(p) };
    c.add += add;
    c.del += del;
    this.changed.set(p, c);
  }

  writeFile(p, text) {
    const old = this.files.get(p);
    this.noteChange(p, text.split('\n').length, old ? old.split('\n').length : 0);
    this.files.set(p, text);
    if (p.startsWith('test/') && p.endsWith('.test.ts')) this.registerTests(p, text);
  }

  commit(message) {
    const hash = this.rng.chars(HEX, 7);
    const files = [...this.changed.keys()];
    let add = 0;
    let del = 0;
    for (const c of this.changed.values()) {
      add += c.add;
      del += c.del;
    }
    const created = files.filter((f) => this.changed.get(f).isNew).map((f) => ` create mode 100644 ${f}`);
    this.commits.unshift({ hash, message });
    this.changed = new Map();
    return [`[main ${hash}] ${message}`,
      ` ${files.length} file${files.length === 1 ? '' : 's'} changed, ${add} insertions(+), ${del} deletions(-)`,
      ...created].join('\n');
  }

  statusShort() {
    const lines = [...this.changed.entries()].map(([f, c]) => `${c.isNew ? '??' : ' M'} ${f}`);
    return lines.length ? lines.join('\n') : '(no output)';
  }

  diffStat() {
    const entries = [...this.changed.entries()];
    if (!entries.length) return '(no output)';
    const width = Math.max(...entries.map(([f]) => f.length));
    let add = 0;
    let del = 0;
    const lines = entries.map(([f, c]) => {
      add += c.add;
      del += c.del;
      const bar = '+'.repeat(Math.min(40, c.add)) + '-'.repeat(Math.min(20, c.del));
      return ` ${f.padEnd(width)} | ${String(c.add + c.del).padStart(3)} ${bar}`;
    });
    lines.push(` ${entries.length} files changed, ${add} insertions(+), ${del} deletions(-)`);
    return lines.join('\n');
  }

  vitest({ files = null, failures = [], verbose = false }) {
    const all = [...this.tests.keys()].sort();
    const chosen = files || all;
    const out = [` RUN  v2.1.8 ${PROJECT_ROOT}`, ''];
    let passed = 0;
    let failed = 0;
    let failedFiles = 0;
    for (const f of chosen) {
      const names = this.tests.get(f) || [];
      const bad = failures.filter((x) => x.file === f);
      const ms = this.rng.int(4, 60);
      failed += bad.length;
      passed += names.length - bad.length;
      if (bad.length) failedFiles++;
      out.push(bad.length
        ? ` ❯ ${f} (${names.length} tests | ${bad.length} failed) ${ms}ms`
        : ` ✓ ${f} (${names.length} tests) ${ms}ms`);
      if (verbose || bad.length) {
        for (const [i, n] of names.entries()) {
          const isBad = bad.find((b) => b.index === i);
          if (isBad) out.push(`   × ${n} ${this.rng.int(1, 9)}ms`, `     → ${isBad.message}`);
          else if (verbose) out.push(`   ✓ ${n} ${this.rng.int(0, 6)}ms`);
        }
      }
    }
    if (failed) {
      out.push('', `⎯⎯⎯⎯⎯⎯⎯ Failed Tests ${failed} ⎯⎯⎯⎯⎯⎯⎯`, '');
      for (const b of failures) {
        const name = (this.tests.get(b.file) || [])[b.index] || 'unknown';
        const line = this.rng.int(8, 80);
        out.push(` FAIL  ${b.file} > ${name}`, `AssertionError: ${b.message}`, '',
          '- Expected', '+ Received', '', `- ${b.expected}`, `+ ${b.received}`, '',
          ` ❯ ${b.file}:${line}:${this.rng.int(5, 40)}`,
          `     ${line - 1}|     const result = ${name.split(' > ')[0].replace(/ .*/, '')}(input);`,
          `     ${line}|     expect(result).toEqual(${b.expected});`,
          '       |                    ^', `     ${line + 1}|   });`, '',
          `⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[${failures.indexOf(b) + 1}/${failures.length}]⎯`, '');
      }
    }
    const t = this.rng.int(600, 2400);
    out.push('', ` Test Files  ${failedFiles ? `${failedFiles} failed | ` : ''}${chosen.length - failedFiles} passed (${chosen.length})`,
      `      Tests  ${failed ? `${failed} failed | ` : ''}${passed} passed (${passed + failed})`,
      `   Start at  ${clock(this.now)}`,
      `   Duration  ${(t / 1000).toFixed(2)}s (transform ${this.rng.int(80, 300)}ms, setup 0ms, collect ${this.rng.int(150, 600)}ms, tests ${this.rng.int(20, 200)}ms, environment 0ms, prepare ${this.rng.int(300, 900)}ms)`);
    return { text: out.join('\n') + (failed ? '\n\n\nCommand exited with code 1' : '\n'), isError: failed > 0 };
  }
}

// ---------------------------------------------------------------------------
// Tools (pi's built-ins plus todo_write and context_tree_query)

const T = {
  read(p, opts = {}) {
    const args = { path: p, ...opts };
    return {
      name: 'read',
      args,
      run(b) {
        const text = b.files.get(p);
        if (text === undefined) {
          return { text: `ENOENT: no such file or directory, access '${PROJECT_ROOT}/${p}'`, isError: true };
        }
        const lines = text.split('\n');
        const start = (opts.offset || 1) - 1;
        const end = opts.limit ? start + opts.limit : lines.length;
        let out = lines.slice(start, end).join('\n');
        if (end < lines.length) out += `\n\n[${lines.length - end} more lines in file. Use offset=${end + 1} to continue.]`;
        return { text: out };
      },
    };
  },
  ls(p = '.') {
    return {
      name: 'ls',
      args: { path: p },
      run(b) {
        const prefix = p === '.' ? '' : p.replace(/\/$/, '') + '/';
        const entries = new Set();
        for (const f of b.files.keys()) {
          if (!f.startsWith(prefix)) continue;
          const rest = f.slice(prefix.length);
          const slash = rest.indexOf('/');
          entries.add(slash === -1 ? rest : rest.slice(0, slash + 1));
        }
        if (p === '.') ['node_modules/', 'dist/', '.git/', '.gitignore'].forEach((e) => entries.add(e));
        return { text: [...entries].sort().join('\n') };
      },
    };
  },
  grep(pattern, p = 'src', extra = {}) {
    return {
      name: 'grep',
      args: { pattern, path: p, ...extra },
      run(b) {
        const out = [];
        const re = new RegExp(pattern, extra.ignoreCase ? 'i' : '');
        for (const [f, text] of [...b.files.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
          if (p !== '.' && !f.startsWith(p.replace(/\/$/, '') + '/')) continue;
          text.split('\n').forEach((line, i) => {
            if (re.test(line)) out.push(`${f}:${i + 1}: ${line.trim()}`);
          });
        }
        return { text: out.length ? out.join('\n') : 'No matches found' };
      },
    };
  },
  bash(command, produce, opts = {}) {
    const args = { command };
    if (opts.timeout) args.timeout = opts.timeout;
    return {
      name: 'bash',
      args,
      slow: !!opts.slow,
      run(b) {
        const r = produce(b);
        return typeof r === 'string' ? { text: r } : r;
      },
    };
  },
  edit(p, oldText, newText) {
    return {
      name: 'edit',
      args: { path: p, oldText, newText },
      run(b) {
        const text = b.files.get(p);
        if (text === undefined || !text.includes(oldText)) {
          return {
            text: `Could not find the exact text in ${p}. The old text must match exactly including all whitespace and newlines.`,
            isError: true,
          };
        }
        const at = text.slice(0, text.indexOf(oldText)).split('\n').length;
        b.noteChange(p, newText.split('\n').length, oldText.split('\n').length);
        b.files.set(p, text.replace(oldText, newText));
        if (p.startsWith('test/')) b.registerTests(p, b.files.get(p));
        const diff = [`@@ -${at},${oldText.split('\n').length} +${at},${newText.split('\n').length} @@`,
          ...oldText.split('\n').map((l) => `-${l}`), ...newText.split('\n').map((l) => `+${l}`)].join('\n');
        return { text: `Successfully replaced text in ${p}.`, details: { diff, firstChangedLine: at } };
      },
    };
  },
  write(p, content) {
    return {
      name: 'write',
      args: { path: p, content },
      run(b) {
        b.writeFile(p, content);
        return { text: `Successfully wrote ${utf8Bytes(content)} bytes to ${p}` };
      },
    };
  },
  todo(todos) {
    return {
      name: 'todo_write',
      args: { todos },
      run() {
        const mark = { done: 'x', in_progress: '~', pending: ' ' };
        return { text: 'Todos updated:\n' + todos.map((t) => `- [${mark[t.status]}] ${t.id}. ${t.content}`).join('\n') };
      },
    };
  },
  contextQuery(b, target, note) {
    const call = b.calls.get(target);
    return {
      name: 'context_tree_query',
      args: { refs: [call.ref], query: note },
      run() {
        return { text: `ref \`${call.ref}\` (${call.name} ${call.args.path || call.args.command}), original output, ${call.text.length} chars:\n\n${call.text}` };
      },
    };
  },
};

// ---------------------------------------------------------------------------
// Protection (SPEC section 5), used to fill protectedToolCallIds

function globToRegExp(glob) {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*' && glob[i + 2] === '/') {
      re += '(?:.*/)?';
      i += 2;
    } else if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function isProtected(toolName, args) {
  const { protectedTools, protectedPaths } = CONFIG.protection;
  if (protectedTools.includes(toolName)) return true;
  if (!args || typeof args.path !== 'string') return false;
  const p = args.path.replace(/\\/g, '/');
  return protectedPaths.some((g) => globToRegExp(g).test(p));
}

// ---------------------------------------------------------------------------
// The scenario: seven user requests, the last one still in progress

function exploreTurns(b, n, topic) {
  const pool = [...b.files.keys()].filter((f) => f.startsWith('src/') || f.startsWith('test/'));
  for (let i = 0; i < n; i++) {
    const kind = b.rng.int(0, 3);
    const file = b.rng.pick(pool);
    const think = b.rng.chance(0.7) ? b.think({ topic, file, fn: b.rng.pick(VERBS) + b.rng.pick(NOUNS) }, b.rng.int(3, 5)) : null;
    if (kind === 0) b.turn({ think, calls: [T.read(file)] });
    else if (kind === 1) {
      const words = [...new Set((b.files.get(file).match(/\b[a-z]+[A-Z]\w+\b/g) || ['parseAmount']))];
      b.turn({ think, calls: [T.grep(b.rng.pick(words), b.rng.pick(['src', 'test', '.']))] });
    } else if (kind === 2) {
      const other = b.rng.pick(pool);
      b.turn({ think, text: b.rng.chance(0.5) ? 'Reading the neighbouring modules as well.' : null, calls: [T.read(file), T.read(other)] });
    } else {
      b.turn({ think, calls: [T.bash(`wc -l ${file} && grep -c "export" ${file}`, (bb) => {
        const text = bb.files.get(file);
        return `${text.split('\n').length - 1} ${file}\n${(text.match(/export/g) || []).length}`;
      })] });
    }
  }
}

// Several paragraphs: one opening, the middle sentences without repeats, one closing.
function longThink(b, vars, paragraphs) {
  const v = { topic: 'the parser', file: 'src/parser/csv.ts', other: 'src/cli.ts', fn: 'parseStatement',
    goal: b.rng.pick(GOALS), ...vars };
  const middles = b.rng.sample(THINK_MIDDLE, Math.min(THINK_MIDDLE.length, paragraphs * b.rng.int(3, 4)));
  const details = b.rng.sample(DETAILS, middles.length);
  const sentences = middles.map((m, i) => fill(m, { ...v, detail: vars.detail || details[i] }));
  const per = Math.ceil(sentences.length / paragraphs);
  const out = [];
  for (let i = 0; i < paragraphs; i++) out.push(sentences.slice(i * per, (i + 1) * per).join(' '));
  out[0] = `${fill(b.rng.pick(THINK_OPEN), v)} ${out[0]}`;
  out[out.length - 1] += ` ${fill(b.rng.pick(THINK_CLOSE), v)}`;
  return out.filter((p) => p.trim()).join('\n\n');
}

function chainFrench(b) {
  b.user('The importer falls over on the statement export from my French bank (test/fixtures/releve-2025-03.csv): ' +
    'it uses semicolons as separators and commas as decimal marks, e.g. `1 234,56`, and the thousands separator is ' +
    'some kind of narrow space. Make `parseStatement` detect the dialect on its own, keep the existing comma/period ' +
    "format working, and add tests for both. Don't change the public API in src/index.ts.", true);
  b.turn({ think: b.think({ topic: 'how the importer splits lines', goal: 'the French export' }, 3),
    text: "I'll start by getting a picture of the repository.",
    calls: [T.ls('.'), T.bash('git status --short && git log --oneline -5', (bb) =>
      `(no output)\n${['a41c9e2 fix: keep BOM-prefixed headers', '77d03f5 report: print a table instead of JSON',
        '0c5be18 categories: case-insensitive rules', '93e1a6d cli: --month option', 'e52f04b initial import'].join('\n')}`)] });
  b.turn({ calls: [T.read('package.json'), T.ls('src'), T.ls('src/parser')] });
  b.turn({ think: b.think({ topic: 'where the separator is chosen', file: 'src/parser/dialect.ts', fn: 'detectDialect' }),
    calls: [T.read('src/parser/csv.ts'), T.read('src/parser/dialect.ts')] });
  b.turn({ calls: [T.read('src/parser/amount.ts'), T.grep('parseAmount', 'src')] });
  b.turn({ think: b.think({ topic: 'what the fixture really contains', file: 'test/fixtures/releve-2025-03.csv' }, 3),
    calls: [T.read('test/fixtures/releve-2025-03.csv')] });
  b.turn({ text: 'Baseline test run before changing anything.', calls: [T.bash('npx vitest run', (bb) => bb.vitest({}), { slow: true })] });
  b.turn({ think: longThink(b, { topic: 'dialect detection', file: 'src/parser/dialect.ts', fn: 'detectDialect',
    other: 'src/parser/csv.ts', goal: 'the French export' }, 2),
  text: 'The separator is hard-coded through `DEFAULT_DIALECT`. I will detect it from the header line.',
  calls: [T.edit('src/parser/dialect.ts',
    "export function detectDialect(headerLine: string): Dialect {\n  const commas = headerLine.split(',').length;\n  if (commas > 1) return DEFAULT_DIALECT;\n  return DEFAULT_DIALECT;\n}",
    "const CANDIDATES = [',', ';', '\\t', '|'];\n\nexport function detectDialect(headerLine: string): Dialect {\n  const counts = CANDIDATES.map((sep) => headerLine.split(sep).length - 1);\n  const best = counts.indexOf(Math.max(...counts));\n  const separator = counts[best] > 0 ? CANDIDATES[best] : ',';\n  // A semicolon export almost always means comma decimals (fr, de, es, it).\n  const decimal = separator === ';' ? ',' : '.';\n  const currency = separator === ';' ? 'EUR' : DEFAULT_DIALECT.currency;\n  return { separator, decimal, currency };\n}")] });
  b.turn({ calls: [T.edit('src/parser/amount.ts',
    "  const digits = text.replace(/[()\\-+\\s]/g, '');\n  const value = Number(digits);",
    "  const stripped = text.replace(/[()\\-+\\s\\u00a0\\u202f]/g, '');\n  const digits = dialect.decimal === ','\n    ? stripped.replace(/\\./g, '').replace(',', '.')\n    : stripped.replace(/,/g, '');\n  const value = Number(digits);")] });
  // A failing edit with large arguments: the whole body retyped with double quotes.
  b.turn({ think: b.think({ topic: 'how parseStatement picks the dialect', fn: 'parseStatement' }, 3),
    calls: [T.edit('src/parser/csv.ts',
      'export function parseStatement(text: string, options: ParseOptions = {}): Transaction[] {\n  const lines = text.replace(/^\\uFEFF/, "").split(/\\r?\\n/).filter((l) => l.trim() !== "");\n  const dialect = options.dialect ?? DEFAULT_DIALECT;\n  const rows = options.skipHeader === false ? lines : lines.slice(1);\n  return rows.map((line, index) => {\n    const cells = splitCells(line, dialect.separator);\n    const [date, label, amount] = cells;\n    return { index, date, label: label.trim(), amount: parseAmount(amount, dialect) };\n  });\n}',
      'export function parseStatement(text: string, options: ParseOptions = {}): Transaction[] {\n  const lines = text.replace(/^\\uFEFF/, "").split(/\\r?\\n/).filter((l) => l.trim() !== "");\n  const dialect = options.dialect ?? detectDialect(lines[0] ?? "");\n  const rows = options.skipHeader === false ? lines : lines.slice(1);\n  return rows.map((line, index) => {\n    const cells = splitCells(line, dialect.separator);\n    const [date, label, debit, credit] = cells;\n    const amount = credit?.trim() ? credit : debit?.trim() ? `-${debit}` : debit;\n    return { index, date, label: label.trim(), amount: parseAmount(amount, dialect) };\n  });\n}')] });
  b.turn({ text: 'The file uses single quotes; re-reading the exact lines.', calls: [T.read('src/parser/csv.ts', { offset: 1, limit: 20 })] });
  b.turn({ calls: [T.edit('src/parser/csv.ts',
    "  const dialect = options.dialect ?? DEFAULT_DIALECT;",
    "  const dialect = options.dialect ?? detectDialect(lines[0] ?? '');"),
  T.edit('src/parser/csv.ts', "import { DEFAULT_DIALECT, type Dialect } from './dialect.js';",
    "import { detectDialect, type Dialect } from './dialect.js';")] });
  const dialectTests = testFile(b.rng, 'detectDialect', 12, ["import { detectDialect } from '../src/parser/dialect.js';",
    "import { parseStatement } from '../src/parser/csv.js';", "import { readFileSync } from 'node:fs';"]) +
    "\ndescribe('parseStatement (fr export)', () => {\n  const text = readFileSync('test/fixtures/releve-2025-03.csv', 'utf8');\n\n  it('reads every row of the relevé', () => {\n    expect(parseStatement(text).length).toBeGreaterThan(20);\n  });\n\n  it('keeps the memo with its line separator (U+2028)', () => {\n    const memo = parseStatement(text).find((t) => t.label.startsWith('REMBOURSEMENT'));\n    expect(memo?.label).toContain('\\u2028');\n  });\n});\n";
  b.turn({ think: b.think({ topic: 'which cases the new tests need', file: 'test/dialect.test.ts' }, 3),
    calls: [T.write('test/dialect.test.ts', dialectTests)] });
  b.turn({ calls: [T.bash('npx vitest run test/dialect.test.ts test/amount.test.ts', (bb) => bb.vitest({
    files: ['test/amount.test.ts', 'test/dialect.test.ts'],
    failures: [{ file: 'test/dialect.test.ts', index: 1, message: "expected NaN to be -123456 // Object.is equality", expected: '-123456', received: 'NaN' },
      { file: 'test/amount.test.ts', index: 3, message: 'unparseable amount: 1 234,56', expected: '123456', received: 'RangeError' }],
  }), { slow: true })] });
  b.turn({ think: longThink(b, { topic: 'why 1 234,56 is still NaN', fn: 'parseAmount', file: 'src/parser/amount.ts' }, 1) +
    '\n\nThe export writes the thousands separator as U+202F (narrow no-break space), and `\\s` in a JS regex does not match it. The fix is to strip it explicitly.',
  calls: [T.edit('src/parser/amount.ts', "  const negative = text.startsWith('-') || text.startsWith('(');",
    "  // Thousands separators: space, no-break space (U+00A0), narrow no-break space (U+202F).\n  text = text.replace(/[\\s\\u00a0\\u202f]/g, '');\n  const negative = text.startsWith('-') || text.startsWith('(');")] });
  b.turn({ calls: [T.bash('npx vitest run', (bb) => bb.vitest({ verbose: true }), { slow: true })] });
  b.turn({ calls: [T.bash('npx tsc --noEmit && git diff --stat', (bb) => bb.diffStat())] });
  b.turn({ calls: [T.bash("git add -A && git commit -m 'parser: detect semicolon/comma-decimal exports'", (bb) => bb.commit('parser: detect semicolon/comma-decimal exports'))] });
  b.answer(longThink(b, { topic: 'what to report back', goal: 'the French export' }, 1),
    'Done. `parseStatement` now detects the dialect from the header line:\n\n' +
    '- `src/parser/dialect.ts`: picks the most frequent of `,` `;` tab `|`; a semicolon export implies comma decimals and EUR.\n' +
    '- `src/parser/amount.ts`: strips spaces, U+00A0 and U+202F as thousands separators before converting; `1 234,56` → 123456 cents.\n' +
    '- `src/parser/csv.ts`: uses the detected dialect unless one is passed in, and reads the Débit/Crédit columns.\n' +
    '- `test/dialect.test.ts`: detection for both formats plus the relevé fixture, including the memo that contains a U+2028 line separator (`REMBOURSEMENT CAFÉ\u2028note : ticket perdu`).\n\n' +
    'The public API in `src/index.ts` is unchanged. All tests pass.');
}

function chainSince(b) {
  b.user('Next: add a `--since YYYY-MM-DD` option to `ledgerline report` that skips transactions before that date. ' +
    'An invalid date should print a clear error message, not a stack trace.');
  b.turn({ think: b.think({ topic: 'the order of work for --since', file: 'src/cli.ts', fn: 'main' }, 3),
    calls: [T.todo([{ id: 1, content: 'Parse --since in src/cli.ts', status: 'in_progress' },
      { id: 2, content: 'Filter by date in monthlyReport', status: 'pending' },
      { id: 3, content: 'Friendly error for invalid dates', status: 'pending' },
      { id: 4, content: 'Tests for the option', status: 'pending' }])] });
  b.turn({ calls: [T.read('src/cli.ts'), T.read('src/model/transaction.ts')] });
  b.turn({ calls: [T.grep('interface ReportOptions', 'src')] });
  exploreTurns(b, 1, 'how dates flow through the report');
  b.turn({ think: b.think({ topic: 'the date format of the exports', fn: 'monthOf', file: 'src/model/transaction.ts' }),
    calls: [T.read('src/report/monthly.ts')] });
  b.turn({ calls: [T.edit('src/cli.ts', "    if (rest[i] === '--month') options.month = rest[++i];",
    "    if (rest[i] === '--month') options.month = rest[++i];\n    else if (rest[i] === '--since') {\n      const since = parseIsoDate(rest[++i] ?? '');\n      if (!since) {\n        console.error(`ledgerline: --since expects YYYY-MM-DD, got \"${rest[i] ?? ''}\"`);\n        return 2;\n      }\n      options.since = since;\n    }")] });
  b.turn({ calls: [T.edit('src/report/monthly.ts', 'export interface ReportOptions {\n  month?: string;\n}',
    'export interface ReportOptions {\n  month?: string;\n  /** ISO date (YYYY-MM-DD); earlier transactions are skipped. */\n  since?: string;\n}'),
  T.edit('src/report/monthly.ts', '    .filter((tx) => !options.month || monthOf(tx) === options.month)',
    '    .filter((tx) => !options.month || monthOf(tx) === options.month)\n    .filter((tx) => !options.since || isoDateOf(tx) >= options.since)')] });
  b.turn({ calls: [T.bash('npx tsc --noEmit', () => ({
    text: "src/cli.ts(17,21): error TS2304: Cannot find name 'parseIsoDate'.\nsrc/report/monthly.ts(20,37): error TS2304: Cannot find name 'isoDateOf'.\n\n\nCommand exited with code 2",
    isError: true }), { slow: true })] });
  b.turn({ think: b.think({ topic: 'where date helpers belong', file: 'src/model/transaction.ts', fn: 'parseIsoDate' }, 4),
    calls: [T.edit('src/model/transaction.ts', 'export function monthOf(tx: Transaction): string {',
      "const ISO_DATE = /^(\\d{4})-(\\d{2})-(\\d{2})$/;\n\n/** Returns the date unchanged when it is a real calendar date, else null. */\nexport function parseIsoDate(text: string): string | null {\n  const m = ISO_DATE.exec(text);\n  if (!m) return null;\n  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));\n  return d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3] ? text : null;\n}\n\n/** DD/MM/YYYY (fr exports) or YYYY-MM-DD, as YYYY-MM-DD. */\nexport function isoDateOf(tx: Transaction): string {\n  const fr = /^(\\d{2})\\/(\\d{2})\\/(\\d{4})$/.exec(tx.date);\n  return fr ? `${fr[3]}-${fr[2]}-${fr[1]}` : tx.date;\n}\n\nexport function monthOf(tx: Transaction): string {"),
    T.edit('src/cli.ts', "import { parseStatement } from './parser/csv.js';",
      "import { parseStatement } from './parser/csv.js';\nimport { parseIsoDate } from './model/transaction.js';"),
    T.edit('src/report/monthly.ts', "import { monthOf, type Transaction } from '../model/transaction.js';",
      "import { isoDateOf, monthOf, type Transaction } from '../model/transaction.js';")] });
  b.turn({ calls: [T.bash('npx tsc --noEmit && npx vitest run', (bb) => bb.vitest({}), { slow: true })] });
  const cliTests = testFile(b.rng, 'parseIsoDate', 10, ["import { parseIsoDate } from '../src/model/transaction.js';"]) +
    "\ndescribe('cli report --since', () => {\n  it('rejects 2025-02-30 with a readable message', async () => {\n    const { stderr, code } = await runCli(['report', '--since', '2025-02-30', 'test/fixtures/releve-2025-03.csv']);\n    expect(code).toBe(2);\n    expect(stderr).toMatch(/--since expects YYYY-MM-DD/);\n  });\n});\n";
  b.turn({ calls: [T.write('test/cli.test.ts', cliTests)] });
  b.turn({ calls: [T.bash('npx vitest run test/cli.test.ts', (bb) => bb.vitest({ files: ['test/cli.test.ts'] }), { slow: true })] });
  b.turn({ calls: [T.todo([{ id: 1, content: 'Parse --since in src/cli.ts', status: 'done' },
    { id: 2, content: 'Filter by date in monthlyReport', status: 'done' },
    { id: 3, content: 'Friendly error for invalid dates', status: 'done' },
    { id: 4, content: 'Tests for the option', status: 'done' }])] });
  b.turn({ calls: [T.bash("git add -A && git commit -m 'cli: --since YYYY-MM-DD'", (bb) => bb.commit('cli: --since YYYY-MM-DD'))] });
  b.answer(b.think({ topic: 'the summary for the user', goal: 'the --since option' }, 3),
    'Added `--since YYYY-MM-DD`:\n\n- `src/cli.ts` validates the value with `parseIsoDate` (rejects `2025-02-30`, `2025-3-1`) and exits with code 2 and a one-line message.\n' +
    '- `src/report/monthly.ts` skips transactions dated before it; French `DD/MM/YYYY` dates are normalised first by `isoDateOf`.\n- `test/cli.test.ts` covers valid and invalid values.');
}

function chainCategories(b) {
  b.user("Add a category breakdown to the monthly report: totals per category, sorted by absolute amount, with an 'Other' bucket for anything uncategorised.");
  b.turn({ think: b.think({ topic: 'where categories are assigned', file: 'src/categories.ts', fn: 'categorize' }),
    calls: [T.read('src/categories.ts'), T.read('src/report/table.ts')] });
  b.turn({ text: 'Checking the scripts again.', calls: [T.read('package.json')] });
  b.turn({ calls: [T.bash('git status --short', (bb) => bb.statusShort())] });
  b.turn({ calls: [T.grep('categorize', 'src')] });
  b.turn({ think: longThink(b, { topic: 'how to total per category', fn: 'monthlyReport', file: 'src/report/monthly.ts' }, 2),
    calls: [T.edit('src/report/monthly.ts', 'export function monthlyReport(',
      "export interface CategoryTotal {\n  category: string;\n  cents: number;\n  count: number;\n}\n\n/** Totals per category, largest absolute amount first; ties keep first-seen order. */\nexport function categoryTotals(rows: ReportRow[]): CategoryTotal[] {\n  const byCategory = new Map<string, CategoryTotal>();\n  for (const row of rows) {\n    const key = row.category || 'Other';\n    const t = byCategory.get(key) ?? { category: key, cents: 0, count: 0 };\n    t.cents += row.cents;\n    t.count += 1;\n    byCategory.set(key, t);\n  }\n  return [...byCategory.values()].sort((a, b) => Math.abs(a.cents) - Math.abs(b.cents));\n}\n\nexport function monthlyReport(")] });
  b.turn({ calls: [T.edit('src/report/table.ts', "const HEADERS = ['Month', 'Category', 'Merchant', 'Amount'];",
    "const HEADERS = ['Month', 'Category', 'Merchant', 'Amount'];\nconst TOTAL_HEADERS = ['Category', 'Count', 'Total'];")] });
  const reportTests = testFile(b.rng, 'categoryTotals', 18, ["import { categoryTotals } from '../src/report/monthly.js';"]);
  b.turn({ calls: [T.write('test/report.test.ts', reportTests)] });
  b.turn({ calls: [T.bash('npx vitest run test/report.test.ts', (bb) => bb.vitest({ files: ['test/report.test.ts'],
    failures: [{ file: 'test/report.test.ts', index: 2, message: "expected [ 'Other', 'Food', 'Salary' ] to deeply equal [ 'Salary', 'Food', 'Other' ]", expected: "['Salary', 'Food', 'Other']", received: "['Other', 'Food', 'Salary']" }] }), { slow: true })] });
  b.turn({ think: b.think({ topic: 'the sort direction', fn: 'categoryTotals', detail: 'the comparator sorts ascending' }, 3),
    text: 'The comparator is inverted: it sorts smallest first.',
    calls: [T.read('src/report/monthly.ts', { offset: 18, limit: 20 })] });
  b.turn({ calls: [T.edit('src/report/monthly.ts', '.sort((a, b) => Math.abs(a.cents) - Math.abs(b.cents));',
    '.sort((a, b) => Math.abs(b.cents) - Math.abs(a.cents));')] });
  b.turn({ calls: [T.bash('npx vitest run --reporter=verbose', (bb) => bb.vitest({ verbose: true }), { slow: true })] });
  b.turn({ calls: [T.bash("git add -A && git commit -m 'report: totals per category'", (bb) => bb.commit('report: totals per category'))] });
  b.answer(longThink(b, { topic: 'what changed for the category breakdown', goal: 'the category breakdown' }, 1),
    'The report now ends with a per-category table (`categoryTotals` in `src/report/monthly.ts`): count and total per category, largest absolute total first, uncategorised rows under **Other**. Tests in `test/report.test.ts`.');
}

function chainRelease(b) {
  b.user('Use the release skill to prepare 0.4.0: changelog entry, version bump, and whatever checklist the skill asks for.');
  b.turn({ think: b.think({ topic: 'what the release skill requires', file: '.pi/skills/release/SKILL.md' }, 3),
    calls: [T.read('.pi/skills/release/SKILL.md')] });
  b.turn({ calls: [T.todo([{ id: 1, content: 'Clean working tree', status: 'in_progress' },
    { id: 2, content: 'CHANGELOG 0.4.0 from git log v0.3.2..HEAD', status: 'pending' },
    { id: 3, content: 'npm version 0.4.0 --no-git-tag-version', status: 'pending' },
    { id: 4, content: 'Build + verbose tests', status: 'pending' },
    { id: 5, content: 'npm pack --dry-run check', status: 'pending' },
    { id: 6, content: 'Commit and tag v0.4.0 (no push)', status: 'pending' }])] });
  b.turn({ calls: [T.bash('git status --short', (bb) => bb.statusShort()),
    T.bash('git log --oneline v0.3.2..HEAD', (bb) => bb.commits.slice(0, 3).map((c) => `${c.hash} ${c.message}`).join('\n'))] });
  b.turn({ calls: [T.read('CHANGELOG.md')] });
  b.turn({ think: b.think({ topic: 'how to phrase the changelog lines', goal: 'the release' }, 3),
    calls: [T.edit('CHANGELOG.md', '# Changelog\n', '# Changelog\n\n## 0.4.0\n\n- **Added** `--since YYYY-MM-DD` for `ledgerline report`.\n- **Added** per-category totals at the end of the report.\n- **Fixed** semicolon exports with comma decimals (French banks, relevés with `1 234,56`).\n')] });
  b.turn({ calls: [T.bash('npm version 0.4.0 --no-git-tag-version', (bb) => {
    bb.writeFile('package.json', bb.files.get('package.json').replace('"version": "0.3.2"', '"version": "0.4.0"'));
    return 'v0.4.0';
  })] });
  b.turn({ calls: [T.bash('npm run build && npx vitest run --reporter=verbose', (bb) =>
    `\n> ledgerline@0.4.0 build\n> tsc -p tsconfig.json\n\n${bb.vitest({ verbose: true }).text}`, { slow: true, timeout: 300 })] });
  b.turn({ calls: [T.bash('npm pack --dry-run', (bb) => {
    const dist = [...bb.files.keys()].filter((f) => f.startsWith('src/')).flatMap((f) => {
      const base = f.replace(/^src\//, 'dist/').replace(/\.ts$/, '');
      return [`${base}.js`, `${base}.d.ts`];
    }).sort();
    const lines = ['npm notice', 'npm notice 📦  ledgerline@0.4.0', 'npm notice Tarball Contents'];
    for (const f of ['CHANGELOG.md', 'README.md', ...dist, 'package.json']) lines.push(`npm notice ${(bb.rng.int(4, 90) / 10).toFixed(1)}kB ${f}`);
    lines.push('npm notice Tarball Details', 'npm notice name: ledgerline', 'npm notice version: 0.4.0',
      `npm notice filename: ledgerline-0.4.0.tgz`, `npm notice package size: ${bb.rng.int(9, 14)}.${bb.rng.int(0, 9)} kB`,
      `npm notice unpacked size: ${bb.rng.int(40, 60)}.${bb.rng.int(0, 9)} kB`,
      `npm notice shasum: ${bb.rng.chars(HEX, 40)}`, `npm notice total files: ${dist.length + 3}`, 'npm notice',
      'ledgerline-0.4.0.tgz');
    return lines.join('\n');
  })] });
  exploreTurns(b, 4, 'anything the release might have missed');
  b.turn({ calls: [T.todo([{ id: 1, content: 'Clean working tree', status: 'done' },
    { id: 2, content: 'CHANGELOG 0.4.0 from git log v0.3.2..HEAD', status: 'done' },
    { id: 3, content: 'npm version 0.4.0 --no-git-tag-version', status: 'done' },
    { id: 4, content: 'Build + verbose tests', status: 'done' },
    { id: 5, content: 'npm pack --dry-run check', status: 'done' },
    { id: 6, content: 'Commit and tag v0.4.0 (no push)', status: 'in_progress' }])] });
  b.turn({ calls: [T.bash("git add -A && git commit -m 'release: v0.4.0' && git tag v0.4.0", (bb) => bb.commit('release: v0.4.0'))] });
  b.answer(longThink(b, { topic: 'the release checklist', goal: 'the release' }, 1),
    '0.4.0 is prepared following `.pi/skills/release/SKILL.md`: changelog section added, version bumped, build and verbose tests green, `npm pack --dry-run` lists only dist/, README, CHANGELOG and package.json. Committed as `release: v0.4.0` and tagged `v0.4.0`; nothing pushed 🚀.');
}

function reportTable(rows, measure) {
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => measure(r[i]))));
  return rows.map((r) => r.map((v, i) => v + ' '.repeat(Math.max(0, widths[i] - measure(v)))).join('  ').trimEnd()).join('\n');
}

function columns(s) {
  let w = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0);
    if (cp === 0xfe0f || cp === 0x200d) continue;
    w += (cp >= 0x1100 && (cp <= 0x115f || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0x1f300 && cp <= 0x1faff))) ? 2 : 1;
  }
  return w;
}

function chainWidth(b) {
  b.user('The report misaligns columns when merchant names are Japanese or contain emoji (see test/fixtures/statement-jp.csv): ' +
    "'カフェ🍵 ミドリ' pushes the amount column to the right. Fix the width calculation, please.");
  b.turn({ think: b.think({ topic: 'how column widths are measured', file: 'src/report/width.ts', fn: 'displayWidth',
    detail: 'String.length counts UTF-16 code units, not terminal columns' }),
  calls: [T.read('src/report/width.ts'), T.read('src/report/table.ts')] });
  b.turn({ calls: [T.read('test/fixtures/statement-jp.csv')] });
  const jpRows = (bb) => {
    const rows = [['Month', 'Category', 'Merchant', 'Amount']];
    for (const line of bb.files.get('test/fixtures/statement-jp.csv').trim().split('\n').slice(1)) {
      const [, merchant, amount] = line.split(',');
      const cat = /ラーメン|パン|カフェ/.test(merchant) ? 'Food' : /書店|文房具/.test(merchant) ? 'Books' : /タクシー/.test(merchant) ? 'Transport' : /薬局/.test(merchant) ? 'Health' : /花屋/.test(merchant) ? 'Leisure' : 'Other';
      rows.push(['2025-03', cat, merchant, `${amount}.00 JPY`]);
    }
    return rows;
  };
  b.turn({ calls: [T.bash('npm run build && node dist/cli.js report --month 2025-03 test/fixtures/statement-jp.csv', (bb) =>
    `\n> ledgerline@0.4.0 build\n> tsc -p tsconfig.json\n\n${reportTable(jpRows(bb), (s) => s.length)}`, { slow: true })] });
  b.turn({ think: b.think({ topic: 'whether the labels need the same treatment', file: 'src/i18n/messages.ts' }, 3),
    calls: [T.read('src/i18n/messages.ts')] });
  b.turn({ calls: [T.grep('displayWidth|padDisplay', '.')] });
  exploreTurns(b, 8, 'every place that pads a column');
  const widthTs = ['// Terminal width of a string, used to pad report columns.',
    '// East Asian wide and fullwidth characters and most emoji take two columns;',
    '// combining marks, variation selectors and zero-width joiners take none.', '',
    'const WIDE: Array<[number, number]> = [',
    '  [0x1100, 0x115f], // Hangul Jamo',
    '  [0x2e80, 0x303e], // CJK radicals, punctuation',
    '  [0x3041, 0x33ff], // Hiragana, Katakana, CJK symbols',
    '  [0x3400, 0x4dbf], // CJK extension A',
    '  [0x4e00, 0x9fff], // CJK unified ideographs (漢字)',
    '  [0xa000, 0xa4cf], // Yi',
    '  [0xac00, 0xd7a3], // Hangul syllables',
    '  [0xf900, 0xfaff], // CJK compatibility ideographs',
    '  [0xff00, 0xff60], // Fullwidth forms (ＡＢＣ)',
    '  [0xffe0, 0xffe6],',
    '  [0x1f300, 0x1f64f], // pictographs, emoticons (🍵 🚕)',
    '  [0x1f900, 0x1f9ff],',
    '  [0x20000, 0x3fffd], // CJK extensions B..',
    '];', '',
    'function isWide(cp: number): boolean {',
    '  let lo = 0;',
    '  let hi = WIDE.length - 1;',
    '  while (lo <= hi) {',
    '    const mid = (lo + hi) >> 1;',
    '    if (cp < WIDE[mid][0]) hi = mid - 1;',
    '    else if (cp > WIDE[mid][1]) lo = mid + 1;',
    '    else return true;',
    '  }',
    '  return false;',
    '}', '',
    'export function displayWidth(text: string): number {',
    '  let width = 0;',
    "  for (const ch of text.normalize('NFC')) {",
    '    const cp = ch.codePointAt(0)!;',
    '    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) continue;',
    '    if (/\\p{Mn}/u.test(ch)) continue;',
    '    width += isWide(cp) ? 2 : 1;',
    '  }',
    '  return width;',
    '}', '',
    'export function padDisplay(text: string, width: number): string {',
    "  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));",
    '}', ''].join('\n');
  b.turn({ think: longThink(b, { topic: 'a width function without a dependency', fn: 'displayWidth', file: 'src/report/width.ts',
    goal: 'column alignment' }, 3),
  text: 'Rewriting `width.ts` with a small range table instead of pulling in a dependency.',
  calls: [T.write('src/report/width.ts', widthTs)] });
  const widthTests = testFile(b.rng, 'displayWidth', 10, ["import { displayWidth } from '../src/report/width.js';"]) +
    "\ndescribe('displayWidth (examples)', () => {\n  it.each([\n    ['abc', 3],\n    ['café', 4],\n    ['ラーメン一番', 12],\n    ['カフェ🍵 ミドリ', 14],\n    ['ＳＵＰＥＲ', 10],\n    ['❤️', 2],\n  ])('%s is %i columns', (text, width) => {\n    expect(displayWidth(text)).toBe(width);\n  });\n});\n";
  b.turn({ calls: [T.write('test/width.test.ts', widthTests)] });
  b.turn({ calls: [T.bash('npx vitest run test/width.test.ts', (bb) => bb.vitest({ files: ['test/width.test.ts'],
    failures: [{ file: 'test/width.test.ts', index: 4, message: 'expected 1 to be 2 // Object.is equality', expected: '2', received: '1' }] }), { slow: true })] });
  b.turn({ think: b.think({ topic: 'why ❤️ measures one column', detail: 'an emoji followed by a variation selector is two columns wide, not three' }, 3),
    calls: [T.edit('src/report/width.ts', '    if (/\\p{Mn}/u.test(ch)) continue;\n    width += isWide(cp) ? 2 : 1;',
      "    if (/\\p{Mn}/u.test(ch) || cp === 0x200d) continue;\n    // VS16 turns the preceding text-style symbol into a two-column emoji.\n    if (cp === 0xfe0f) {\n      width += 1;\n      continue;\n    }\n    width += isWide(cp) ? 2 : 1;")] });
  b.turn({ calls: [T.bash('npx vitest run test/width.test.ts', (bb) => bb.vitest({ files: ['test/width.test.ts'] }), { slow: true })] });
  b.turn({ calls: [T.bash('npm run build && node dist/cli.js report --month 2025-03 test/fixtures/statement-jp.csv', (bb) =>
    `\n> ledgerline@0.4.0 build\n> tsc -p tsconfig.json\n\n${reportTable(jpRows(bb), columns)}`, { slow: true })] });
  b.turn({ calls: [T.bash("git add -A && git commit -m 'report: measure East Asian wide characters and emoji'", (bb) => bb.commit('report: measure East Asian wide characters and emoji'))] });
  b.answer(longThink(b, { topic: 'the width fix', goal: 'column alignment' }, 1),
    'Fixed: `displayWidth` now counts terminal columns (wide CJK and fullwidth forms and emoji = 2, combining marks and ZWJ = 0, VS16 widens the preceding symbol). ' +
    'The report of `statement-jp.csv` lines up, including `カフェ🍵 ミドリ`. Tests in `test/width.test.ts`.');
}

function chainRounding(b, amountReadId) {
  b.user("Before we ship: earlier you changed the amount parser for the French export. Pull back what the original `parseAmount` looked like and double-check the rounding for values like `0,075` and `-1 234,565`. I'm worried about float drift.");
  b.turn({ think: b.think({ topic: 'what the original parseAmount did', fn: 'parseAmount', file: 'src/parser/amount.ts' }, 3),
    text: 'Retrieving the original file from the summarized history.',
    calls: [T.contextQuery(b, amountReadId, 'original parseAmount before the dialect change')] });
  b.turn({ calls: [T.read('src/parser/amount.ts')] });
  b.turn({ calls: [T.bash(`node -e "for (const v of ['0.075', '1234.565', '1.005']) console.log(v, Math.round(Number(v) * 100))"`,
    () => '0.075 7\n1234.565 123456\n1.005 100')] });
  // Large failing edit: the snippet was retyped from the recovered (original) version.
  b.turn({ think: longThink(b, { topic: 'parsing cents without floats', fn: 'parseAmount', detail: 'Math.round on a float that came from 0.075 * 100 rounds down' }, 2),
    calls: [T.edit('src/parser/amount.ts',
      "  const negative = text.startsWith('-') || text.startsWith('(');\n  const digits = text.replace(/[()\\-+\\s]/g, '');\n  const value = Number(digits);\n  if (Number.isNaN(value)) {\n    throw new RangeError(`unparseable amount: ${raw}`);\n  }\n  const cents = Math.round(value * 100);\n  return { cents: negative ? -cents : cents, currency };",
      "  const negative = text.startsWith('-') || text.startsWith('(');\n  const stripped = text.replace(/[()\\-+]/g, '');\n  const decimal = dialect.decimal;\n  const [whole = '0', frac = ''] = stripped.split(decimal);\n  if (!/^\\d*$/.test(whole.replace(decimal === ',' ? /\\./g : /,/g, '')) || !/^\\d*$/.test(frac)) {\n    throw new RangeError(`unparseable amount: ${raw}`);\n  }\n  // Round half away from zero on the third decimal, using integers only.\n  const padded = (frac + '000').slice(0, 3);\n  let cents = Number(whole.replace(/\\D/g, '') || '0') * 100 + Number(padded.slice(0, 2));\n  if (Number(padded[2]) >= 5) cents += 1;\n  return { cents: negative ? -cents : cents, currency };")] });
  b.turn({ text: 'That was the pre-change text; reading the current version again.', calls: [T.read('src/parser/amount.ts')] });
  const amount = b.files.get('src/parser/amount.ts');
  const from = amount.indexOf("  const stripped = text.replace(");
  const to = amount.indexOf('  return { cents: negative');
  b.turn({ calls: [T.edit('src/parser/amount.ts', amount.slice(from, to),
    "  const stripped = text.replace(/[()\\-+]/g, '');\n  const [whole = '0', frac = ''] = dialect.decimal === ','\n    ? [stripped.split(',')[0].replace(/\\./g, ''), stripped.split(',')[1]]\n    : [stripped.split('.')[0].replace(/,/g, ''), stripped.split('.')[1]];\n  if (!/^\\d+$/.test(whole) || !/^\\d*$/.test(frac ?? '')) {\n    throw new RangeError(`unparseable amount: ${raw}`);\n  }\n  // Integer arithmetic only: round half away from zero on the third decimal.\n  const padded = ((frac ?? '') + '000').slice(0, 3);\n  let cents = Number(whole) * 100 + Number(padded.slice(0, 2));\n  if (Number(padded[2]) >= 5) cents += 1;\n")] });
  b.turn({ calls: [T.edit('test/amount.test.ts', "describe('parseAmount', () => {",
    "describe('parseAmount', () => {\n  it.each([\n    ['0,075', 8],\n    ['-1 234,565', -123457],\n    ['1.005', 101],\n    ['(12,00)', -1200],\n  ])('rounds %s half away from zero', (raw, cents) => {\n    const dialect = raw.includes(',') ? FR : US;\n    expect(parseAmount(raw, dialect).cents).toBe(cents);\n  });\n")] });
  b.turn({ calls: [T.bash('npx vitest run test/amount.test.ts', (bb) => bb.vitest({ files: ['test/amount.test.ts'] }), { slow: true })] });
  exploreTurns(b, 7, 'other float arithmetic on amounts');
  b.turn({ calls: [T.bash("git add -A && git commit -m 'parser: integer cents, half away from zero'", (bb) => bb.commit('parser: integer cents, half away from zero'))] });
  b.answer(longThink(b, { topic: 'the rounding answer', goal: 'rounding' }, 1),
    'You were right to worry: the original `parseAmount` did `Math.round(Number(digits) * 100)`, so `0.075` became 7 cents and `1.005` became 100. ' +
    'It now splits the whole and fractional parts as strings and rounds half away from zero with integers: `0,075` → 8, `-1 234,565` → -123457. Cases added to `test/amount.test.ts`.');
}

function chainFinal(b) {
  b.user("Run the full suite once more and fix anything that's still red, then stop — I'll review.");
  b.turn({ think: b.think({ topic: 'the state of the suite', goal: 'a green test suite' }, 3),
    calls: [T.bash('npx vitest run', (bb) => bb.vitest({ failures: [{ file: 'test/cli.test.ts', index: 2,
      message: "expected '2025-02' to be '2025-03' // Object.is equality", expected: "'2025-03'", received: "'2025-02'" }] }), { slow: true })] });
  b.turn({ calls: [T.read('test/cli.test.ts'), T.read('src/model/transaction.ts')] });
  b.turn({ think: longThink(b, { topic: 'the time-zone bug in monthOf', fn: 'monthOf', file: 'src/model/transaction.ts',
    detail: 'new Date("2025-03-01") is UTC but new Date(2025, 2, 1) is local time' }, 2),
  text: '`monthOf` reads the month in local time from a UTC date; on a machine west of UTC the 1st of the month lands in the previous month.',
  calls: [T.edit('src/model/transaction.ts', "  const d = new Date(tx.date);\n  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}`;",
    '  return isoDateOf(tx).slice(0, 7);')] });
  exploreTurns(b, 7, 'what else depends on monthOf');
  // The last six assistant turns come after the last flush (pending): their
  // results are not summarized, so errors among them keep isError for phase 2.
  b.turn({ calls: [T.bash('npx vitest run', (bb) => bb.vitest({ failures: [{ file: 'test/report.test.ts', index: 5,
    message: "expected '2025-3' to be '2025-03'", expected: "'2025-03'", received: "'2025-3'" }] }), { slow: true })] });
  b.turn({ think: b.think({ topic: 'the remaining failure', fn: 'isoDateOf' }, 3), calls: [T.grep('new Date\\(', 'src')] });
  b.turn({ calls: [T.read('test/report.test.ts', { offset: 1, limit: 40 })] });
  // Large failing edit, old enough when the session ends to have its arguments purged.
  b.turn({ think: b.think({ topic: 'how --month reaches monthlyReport', file: 'src/cli.ts', fn: 'main' }, 3),
    calls: [T.edit('src/cli.ts',
      "  const options: ReportOptions = {};\n  const files: string[] = [];\n  for (let i = 0; i < rest.length; i++) {\n    if (rest[i] === '--month') options.month = rest[++i];\n    else files.push(rest[i]);\n  }\n  const txs = files.flatMap((f) => parseStatement(readFileSync(f, 'utf8')));",
      "  const options: ReportOptions = {};\n  const files: string[] = [];\n  for (let i = 0; i < rest.length; i++) {\n    if (rest[i] === '--month') {\n      const month = normalizeMonth(rest[++i] ?? '');\n      if (!/^\\d{4}-\\d{2}$/.test(month)) {\n        console.error(`ledgerline: --month expects YYYY-MM, got \"${rest[i] ?? ''}\"`);\n        return 2;\n      }\n      options.month = month;\n    } else files.push(rest[i]);\n  }\n  const txs = files.flatMap((f) => parseStatement(readFileSync(f, 'utf8')));")] });
  b.turn({ text: 'The loop has the `--since` branch in it now; editing only the `--month` line.',
    calls: [T.edit('src/cli.ts', "    if (rest[i] === '--month') options.month = rest[++i];",
      "    if (rest[i] === '--month') options.month = normalizeMonth(rest[++i] ?? '');"),
    T.bash('npx tsc --noEmit', () => ({ text: "src/cli.ts(16,48): error TS2304: Cannot find name 'normalizeMonth'.\n\n\nCommand exited with code 2", isError: true }))] });
  // Errored in the very last turn: inside the purge cooldown, so its arguments stay.
  b.turn({ think: b.think({ topic: 'where normalizeMonth should live', fn: 'normalizeMonth', file: 'src/model/transaction.ts' }, 4),
    calls: [T.edit('src/model/transaction.ts',
      "export function monthOf(tx: Transaction): string {\n  const d = new Date(tx.date);\n  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}`;\n}\n",
      "export function monthOf(tx: Transaction): string {\n  return isoDateOf(tx).slice(0, 7);\n}\n\n/** Accepts YYYY-M or YYYY-MM (the CLI used to accept both) and returns YYYY-MM, or the input unchanged. */\nexport function normalizeMonth(text: string): string {\n  const m = /^(\\d{4})-(\\d{1,2})$/.exec(text.trim());\n  if (!m) return text;\n  const month = Number(m[2]);\n  return month >= 1 && month <= 12 ? `${m[1]}-${String(month).padStart(2, '0')}` : text;\n}\n"),
    T.edit('src/cli.ts', "import { parseIsoDate } from './model/transaction.js';",
      "import { normalizeMonth, parseIsoDate } from './model/transaction.js';")] });
}

// ---------------------------------------------------------------------------
// Pruning state, summaries and chains

function describeArgs(call) {
  const a = call.args;
  if (call.name === 'grep') return `${a.pattern}` + (a.path ? ` in ${a.path}` : '');
  return a.path || (a.command ? a.command.split('\n')[0] : null) ||
    (a.refs ? a.refs.join(', ') : null) || (a.todos ? `${a.todos.length} todos` : '');
}

function summaryLine(call) {
  const what = describeArgs(call);
  const first = call.text.split('\n').find((l) => l.trim() !== '') || '';
  const lines = call.text.split('\n').length;
  const clipped = what.length > 90 ? what.slice(0, 89) + '…' : what;
  const head = first.length > 100 ? first.slice(0, 99) + '…' : first;
  return `- \`${call.ref}\` ${call.name} \`${clipped}\`${call.isError ? ' (error)' : ''}: ${head}\n  (${lines} lines, ${call.text.length} chars)`;
}

function batchSummary(calls) {
  return calls.map(summaryLine).join('\n') +
    `\n\nRefs in this batch: ${calls.map((c) => `\`${c.ref}\``).join(', ')}. ` +
    'Pass any of them to `context_tree_query` to get the full output back.';
}

function preview(text) {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= PREVIEW_MAX_BYTES) return text;
  const head = buf.subarray(0, PREVIEW_MAX_BYTES).toString('utf8');
  return head.slice(0, head.lastIndexOf('\n'));
}

function buildState(b) {
  const assistants = b.turns;
  const pending = new Set(assistants.slice(-PENDING_TURNS));
  const records = {};
  const dedupAliases = {};
  const shortRefs = {};
  const refAliases = {};
  const summaryBodies = [];
  const customs = []; // [afterMessageIndex, message]
  for (const turn of assistants) {
    if (pending.has(turn) || !turn.calls.length) continue;
    const fresh = [];
    for (const call of turn.calls) {
      call.summarized = true;
      if (call.dupOf) {
        dedupAliases[call.id] = call.dupOf;
        shortRefs[call.id] = b.calls.get(call.dupOf).ref;
        continue;
      }
      const rec = { toolName: call.name, args: call.args };
      const bytes = utf8Bytes(call.text);
      if (bytes >= SPILL_MIN_BYTES) {
        rec.spillPath = `${SPILL_DIR}/${call.id}.txt`;
        rec.spillBytes = bytes;
        rec.resultPreview = preview(call.text);
      }
      records[call.id] = rec;
      shortRefs[call.id] = call.ref;
      refAliases[call.ref] = call.id;
      fresh.push(call);
    }
    if (!fresh.length) continue;
    const text = batchSummary(fresh);
    summaryBodies.push({ toolCallIds: fresh.map((c) => c.id), text });
    const last = turn.calls[turn.calls.length - 1];
    const lastResult = b.messages[last.resultIndex];
    customs.push([last.resultIndex, {
      role: 'custom',
      customType: 'context-prune-summary',
      content: text,
      display: false,
      details: {
        toolCallRefs: fresh.map((c) => ({ shortId: c.ref, toolCallId: c.id })),
        toolNames: fresh.map((c) => c.name),
        turnIndex: turn.index + 1,
        timestamp: turn.ts,
      },
      timestamp: lastResult.timestamp + 1,
    }]);
  }

  const closed = b.chains.filter((c) => c.finalTs !== null);
  const compressible = closed.slice(0, Math.max(0, closed.length - ROLLING_WINDOW));
  const chains = [];
  const blockOfChain = new Map();
  for (const [k, chain] of compressible.entries()) {
    const calls = chain.turns.flatMap((t) => t.calls).filter((c) => c.summarized);
    if (!calls.length) continue;
    const blockId = `b${chains.length + 1}`;
    const closer = closed[k + ROLLING_WINDOW]; // the chain whose close pushed this one out of the window
    const entry = {
      blockId,
      startUserTimestamp: chain.userTs,
      droppedToolCallIds: calls.map((c) => c.id),
      finalAssistantTimestamp: chain.finalTs,
      toolRefs: calls.map((c) => shortRefs[c.id]),
      compressedAt: closer.finalTs + b.rng.int(300, 2500),
    };
    const prot = calls.filter((c) => isProtected(c.name, c.args)).map((c) => c.id);
    if (prot.length) entry.protectedToolCallIds = prot;
    blockOfChain.set(chain, entry);
    chains.push(entry);
  }
  // Fused range summaries for the later blocks, each citing its predecessor.
  for (const [i, entry] of chains.entries()) {
    if (i === 0) continue;
    const refs = entry.toolRefs;
    const unique = [...new Set(refs)];
    const shown = unique.slice(0, 12).map((r) => `\`${r}\``).join(', ');
    const keyLines = entry.droppedToolCallIds.map((id) => b.calls.get(id)).filter((c) => !c.dupOf && c.name !== 'read')
      .slice(0, 8).map((c) => `- \`${c.ref}\` ${c.name} \`${describeArgs(c).slice(0, 80)}\`${c.isError ? ' (failed)' : ''}`);
    entry.rangeSummaryText = `Request ${entry.blockId} (closed): ${refs.length} tool calls, refs ${shown}${unique.length > 12 ? ` and ${unique.length - 12} more` : ''}.\n` +
      `Key steps:\n${keyLines.join('\n')}\n\nEarlier work this request builds on:\n{b${i}}`;
  }

  const state = { records, dedupAliases, shortRefs, refAliases, chains, summaryBodies };
  const messages = [];
  let ci = 0;
  for (const [i, m] of b.messages.entries()) {
    messages.push(m);
    while (ci < customs.length && customs[ci][0] === i) messages.push(customs[ci++][1]);
  }
  return { state, messages };
}

function chooseBoundary(messages, state) {
  // The persisted frontier: an assistant timestamp in the older half of the
  // session, late enough that some assistants with thinking that survive chain
  // compression (those after the compressed chains) lie behind it.
  const lastCompressedStart = Math.max(...state.chains.map((c) => c.startUserTimestamp));
  const firstRaw = messages.findIndex((m) => m.role === 'user' && m.timestamp > lastCompressedStart);
  const half = Math.floor(messages.length / 2);
  const midTime = (messages[0].timestamp + messages[messages.length - 1].timestamp) / 2;
  const target = Math.max(firstRaw, Math.floor(messages.length * BOUNDARY_FRACTION));
  for (let i = target; i < half; i++) {
    const m = messages[i];
    if (m.role !== 'assistant' || m.timestamp >= midTime) continue;
    const behind = messages.slice(firstRaw, i).filter((x) => x.role === 'assistant' && x.content.some((c) => c.type === 'thinking'));
    if (behind.length >= 2) return m.timestamp;
  }
  throw new Error('scenario too short: no boundary candidate in the older half after the compressed chains');
}

// ---------------------------------------------------------------------------

function generate() {
  const rng = new Rng(SEED);
  const b = new Builder(rng);
  chainFrench(b);
  const amountRead = b.turns.flatMap((t) => t.calls).find((c) => c.name === 'read' && c.args.path === 'src/parser/amount.ts');
  chainSince(b);
  chainCategories(b);
  chainRelease(b);
  chainWidth(b);
  chainRounding(b, amountRead.id);
  chainFinal(b);

  const { state, messages } = buildState(b);
  const thinkingBoundaryTimestamp = chooseBoundary(messages, state);
  const count = (role) => messages.filter((m) => m.role === role).length;
  const meta = {
    generator: GENERATOR,
    seed: SEED,
    description: 'Synthetic pi coding-agent session (a TypeScript CLI, seven user requests, the last one in progress) ' +
      'with a pi-condense pruning state. All text is generated from templates; no real transcript is included.',
    project: PROJECT_ROOT,
    sessionId: SESSION_ID,
    options: {
      pending_turns: PENDING_TURNS,
      rolling_window: ROLLING_WINDOW,
      spill_min_bytes: SPILL_MIN_BYTES,
      preview_max_bytes: PREVIEW_MAX_BYTES,
      boundary_fraction: BOUNDARY_FRACTION,
      session_dir: SPILL_DIR.slice(0, SPILL_DIR.lastIndexOf('/')),
    },
    stats: {
      messages: messages.length,
      users: count('user'),
      assistants: count('assistant'),
      toolResults: count('toolResult'),
      erroredToolResults: messages.filter((m) => m.role === 'toolResult' && m.isError === true).length,
      customSummaries: count('custom'),
      records: Object.keys(state.records).length,
      spilledRecords: Object.values(state.records).filter((r) => r.spillPath).length,
      dedupAliases: Object.keys(state.dedupAliases).length,
      chainEntries: state.chains.length,
    },
  };
  return JSON.stringify({ messages, state, config: CONFIG, thinkingBoundaryTimestamp, meta }) + '\n';
}

function main(argv) {
  const text = generate();
  if (argv.includes('--check')) {
    let current = null;
    try {
      current = fs.readFileSync(OUT_FILE, 'utf8');
    } catch {
      // missing file: reported below
    }
    if (current !== text) {
      console.error(`${path.relative(process.cwd(), OUT_FILE)} is out of date: run node scripts/gen-sample.js`);
      return 1;
    }
    console.log(`${path.relative(process.cwd(), OUT_FILE)} is up to date (${Buffer.byteLength(text)} bytes)`);
    return 0;
  }
  fs.mkdirSync(path.dirname(OUT_FILE), { recursive: true });
  fs.writeFileSync(OUT_FILE, text);
  console.log(`wrote ${path.relative(process.cwd(), OUT_FILE)} (${Buffer.byteLength(text)} bytes)`);
  return 0;
}

module.exports = { generate, OUT_FILE, SEED, GENERATOR };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
