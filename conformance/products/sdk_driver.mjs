#!/usr/bin/env node
// The real Claude Agent SDK's query() for one case of the real-products tier, under Node.js.
//
//   node sdk_driver.mjs CONFIG.json
//
// CONFIG (written by conformance/products/sdk_run.py): {"sdk": the SDK's entry module (sdk.mjs
// of the installed @anthropic-ai/claude-agent-sdk), "prompt": the one-shot task, "options":
// query()'s options as JSON (cwd, env, model, maxTurns, allowedTools, permissionMode, resume,
// allowDangerouslySkipPermissions, pathToClaudeCodeExecutable, ...), "deny": whether to pass the
// unattended provider's callbacks (canUseTool, onElicitation, onUserDialog; never granting),
// "timeout_ms": when to abort the query; "own_spawn": false, for a measurement of the SDK's
// built-in spawn, lets the SDK spawn the CLI itself: only the messages and query_end are logged}.
//
// As the provider does, the CLI is spawned through the SDK's spawnClaudeCodeProcess hook, so that
// what the SDK passes to the CLI and the CLI's stdio can be kept (the CLI stays in the driver's
// process group, which the caller ends). Every observation is one JSON line on stdout, in the
// order it happened:
//   {"spawn": {"command", "args", "env_keys", "env_added", "cwd"}}  what the SDK asked to spawn
//                                                       (env_added: the variables the SDK set itself)
//   {"stdin": frame} / {"stdout": frame}                 the stream-json the SDK and the CLI exchanged
//   {"stdout_line": text}                                a CLI stdout line that is not JSON
//   {"stderr": text}                                     the CLI's stderr
//   {"message": message}                                 each SDKMessage query() yielded
//   {"query_end": {"thrown": null | {"name", "message"}}} the iteration's end: normal, or what it threw
//   {"exit": {"exitCode", "signal"}}                     how the CLI ended (before or after query_end)
//   {"driver_end": true}                                 the last line
// The driver exits 0 once it has written driver_end; anything else is a driver failure.

import { spawn } from "node:child_process";
import { readFileSync, writeSync } from "node:fs";
import process from "node:process";
import { pathToFileURL } from "node:url";

const EXIT_GRACE_MS = 5000; // how long the CLI may take to exit once the query ended

function emit(item) {
  writeSync(1, JSON.stringify(item) + "\n");
}

function lines(stream, each) {
  let buffered = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffered += chunk;
    let at;
    while ((at = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      if (line.trim() !== "") each(line);
    }
  });
  stream.on("end", () => {
    if (buffered.trim() !== "") each(buffered);
  });
}

function frame(kind, line) {
  try {
    emit({ [kind]: JSON.parse(line) });
  } catch {
    emit({ [`${kind}_line`]: line });
  }
}


const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { query } = await import(pathToFileURL(config.sdk).href);

let child;
let exited;
const exit = new Promise((resolve) => {
  exited = resolve;
});

function spawnClaudeCodeProcess(options) {
  emit({
    spawn: {
      command: options.command,
      args: options.args,
      env_keys: Object.keys(options.env).filter((k) => options.env[k] !== undefined).sort(),
      env_added: Object.fromEntries(
        Object.keys(options.env)
          .filter((k) => options.env[k] !== undefined && options.env[k] !== config.options.env?.[k])
          .sort()
          .map((k) => [k, options.env[k]]),
      ),
      cwd: options.cwd ?? null,
    },
  });
  child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"], // in the driver's process group, which its caller ends
  });
  child.on("exit", (code, signal) => {
    emit({ exit: { exitCode: code, signal } });
    exited();
  });
  child.on("error", () => exited());
  lines(child.stdout, (line) => frame("stdout", line));
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text) => emit({ stderr: text }));
  const write = child.stdin.write.bind(child.stdin);
  child.stdin.write = (data, ...rest) => {
    for (const line of String(data).split("\n")) if (line.trim() !== "") frame("stdin", line);
    return write(data, ...rest);
  };
  if (options.signal) options.signal.addEventListener("abort", () => child.kill("SIGTERM"), { once: true });
  return child;
}

const DENY = { behavior: "deny", message: "This unattended Claude Code subagent cannot request human approval." };
const callbacks = config.deny
  ? {
      canUseTool: async () => DENY,
      onElicitation: async () => ({ action: "decline" }),
      onUserDialog: async () => ({ behavior: "cancelled" }),
    }
  : { onElicitation: async () => ({ action: "decline" }), onUserDialog: async () => ({ behavior: "cancelled" }) };

const abortController = new AbortController();
const timer = setTimeout(() => abortController.abort(), config.timeout_ms ?? 60000);
let thrown = null;
try {
  const run = query({
    prompt: config.prompt,
    // own_spawn false (a measurement of the SDK's built-in spawn): the SDK spawns the CLI itself.
    options: { ...config.options, ...callbacks, abortController, ...(config.own_spawn === false ? {} : { spawnClaudeCodeProcess }) },
  });
  for await (const message of run) emit({ message });
} catch (error) {
  thrown = { name: error?.name ?? typeof error, message: String(error?.message ?? error) };
}
emit({ query_end: { thrown } });
clearTimeout(timer);
if (child !== undefined && child.exitCode === null && child.signalCode === null) {
  const grace = setTimeout(() => child.kill("SIGKILL"), EXIT_GRACE_MS);
  await exit;
  clearTimeout(grace);
}
emit({ driver_end: true });
process.exit(0);
