#!/usr/bin/env node
// @ts-check
// A subagent-conformance adapter for your harness, over the exec protocol (JSON lines on stdin
// and stdout; logs to stderr). Fill in each operation with a call into your harness, then run
// the suite against it:
//
//   python -m pytest --pyargs conformance --impl="exec:node adapter.mjs"
//
// JavaScript that Node runs as it is, typed by TypeScript: operations.d.ts is generated from the
// suite's spec/schema/operations.json, and `npx tsc -p .` (tsconfig.json; npm install --save-dev
// typescript @types/node) checks this file against it. An operation left as it is answers "not implemented", which the suite reports as
// that operation's failure. Claim only what your harness does: the suite tests what DECLARATION
// claims and reports the rest as not applicable.

import process from "node:process";
import { createInterface } from "node:readline";

/** @type {import("./operations").Declaration} */
const DECLARATION = {
  protocol: "1",
  // The selection bindings your harness reads: chunk-events, embedded-stream, text-stream.
  bindings: ["chunk-events", "embedded-stream", "text-stream"],
  // The products you drive, each at the package version the suite ships, e.g. { codex: "0.147.0" }.
  providers: {},
  // The providers whose managed process (run_claude_code / run_codex) you drive too.
  process_drivers: [],
  // Optional: settlements (the settle_run paths you take), background (job, notice),
  // operations (exactly the operations you implement) and implementation ({ name, version }).
};

class NotImplemented extends Error {
  /** @param {string} operation */
  constructor(operation) {
    super(`${operation} is not implemented yet`);
    this.name = "NotImplemented";
  }
}

// {stubs}

/** @type {Record<string, (input: any) => unknown>} */
const OPERATIONS = {
  describe: () => DECLARATION,
  /* {operations} */
};

/** One request line: answer exactly one response line. */
async function answer(/** @type {string} */ line) {
  if (line.trim() === "") return;
  const { id, op, input } = JSON.parse(line);
  const operation = OPERATIONS[op];
  try {
    if (operation === undefined) throw new Error(`unknown operation ${JSON.stringify(op)}`);
    const output = await operation(input);
    process.stdout.write(`${JSON.stringify({ id, output: output ?? null })}\n`);
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    process.stdout.write(`${JSON.stringify({ id, error: { message: `${op} failed: ${message}` } })}\n`);
  }
}

// One request at a time, in order: each is answered before the next is read.
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  await answer(line);
}
