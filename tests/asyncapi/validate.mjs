// Validates an AsyncAPI document with the official parser (@asyncapi/parser, pinned in
// package.json beside this script), as CI does for docs/asyncapi.json:
//
//     node tests/asyncapi/validate.mjs docs/asyncapi.json [SAMPLES]
//
// Prints every diagnostic, most severe first, and exits 1 if any is an error (the parser
// also reports warnings and hints, which do not fail), 2 if the parser is not installed.
// SAMPLES, a JSON array of {"message": ID, "payload": MAP, "valid": BOOL}, checks that
// JSON Schema (Ajv, as the parser resolved each message's payload) accepts each payload
// exactly when `valid` says (what the server's own validation said: tests/protocol/
// test_asyncapi.py), and exits 1 on any disagreement, printed.
// The parser is installed outside the checkout (.ci/run: `npm ci` of this folder's
// package.json and lock into build/asyncapi); ASYNCAPI_PARSER_DIR names another folder
// holding its node_modules.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = resolve(process.env.ASYNCAPI_PARSER_DIR || join(here, "..", "..", "build", "asyncapi"));
const SEVERITY = ["error", "warning", "info", "hint"];  // the parser's DiagnosticSeverity, 0-3

function load(name) {
  try {
    return createRequire(join(modules, "package.json"))(name);
  } catch (error) {
    process.stderr.write(`${name} is not installed in ${modules}: ${error.message}\n`);
    process.exit(2);
  }
}

function line(diagnostic) {
  const where = diagnostic.path.length ? diagnostic.path.join(".") : "(document)";
  const severity = SEVERITY[diagnostic.severity] ?? String(diagnostic.severity);
  return `${severity}: ${where}: ${diagnostic.message} [${diagnostic.code}]`;
}

// The samples whose verdict under the document's payload schemas is not `valid`.
function disagreements(document, samples) {
  const Ajv = load("ajv").default;
  const ajv = new Ajv({ strict: false });  // the parser's `x-parser-*` keywords are notes
  const checks = new Map();
  const found = [];
  for (const { message, payload, valid } of samples) {
    const spec = document.allMessages().get(message);
    if (!spec) {
      found.push(`${message}: no such message in the document`);
      continue;
    }
    if (!checks.has(message)) checks.set(message, ajv.compile(spec.payload().json()));
    const check = checks.get(message);
    if (check(payload) !== valid) {
      const why = valid ? `refused: ${ajv.errorsText(check.errors)}` : "accepted";
      found.push(`${message}: ${JSON.stringify(payload)} ${why}`);
    }
  }
  return found;
}

async function main(path, samplesPath) {
  if (!path) {
    process.stderr.write("usage: node validate.mjs DOCUMENT [SAMPLES]\n");
    return 2;
  }
  const { Parser } = load("@asyncapi/parser");
  const { document, diagnostics } = await new Parser().parse(readFileSync(path, "utf8"), {
    source: resolve(path),
  });
  const sorted = [...diagnostics].sort((a, b) => a.severity - b.severity);
  for (const diagnostic of sorted) {
    process.stdout.write(line(diagnostic) + "\n");
  }
  const errors = diagnostics.filter((d) => d.severity === 0).length;
  if (errors || !document) {
    process.stdout.write(`${path}: ${errors} error(s): not a valid AsyncAPI document\n`);
    return 1;
  }
  process.stdout.write(`${path}: valid AsyncAPI ${document.version()}, ` +
    `${document.allMessages().length} messages, ${diagnostics.length} other diagnostic(s)\n`);
  if (!samplesPath) return 0;
  const samples = JSON.parse(readFileSync(samplesPath, "utf8"));
  const found = disagreements(document, samples);
  for (const problem of found) process.stdout.write(`disagrees: ${problem}\n`);
  process.stdout.write(`${samplesPath}: ${samples.length} samples, ${found.length} ` +
    "where the schema and the server disagree\n");
  return found.length ? 1 : 0;
}

process.exitCode = await main(process.argv[2], process.argv[3]);
