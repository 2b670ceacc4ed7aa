#!/usr/bin/env node
// A persistent handler for `delayq work --persistent -- ./handler.js`: one task per stdin line.
const readline = require("readline");

function handle(task) { // your code: return done or retry, throw to fail
  const p = task.payload;
  if (p && typeof p === "object" && "error" in p) throw new Error(String(p.error));
  return p && p.busy ? "retry" : "done";
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const task = JSON.parse(line);
  let out;
  try {
    out = { id: task.id, result: handle(task) };
  } catch (e) {
    out = { id: task.id, result: "fail", error: String(e), trace: e.stack };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
});
