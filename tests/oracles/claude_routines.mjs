// Claude Code's own routines, run under Node as a test oracle.
//
// Some of what Claude Code 2.1.328 does cannot be reached by running it offline (the strict
// wire schema sits behind a remote feature gate).  The installed binary still holds the
// routine as JavaScript text: this script finds the module that defines it, evaluates that
// module in this process with its imports stubbed (except the small helpers the routine
// needs, which are loaded the same way from their own modules), and answers questions with
// it.  Nothing is copied into the project: the code is read from the binary at test time.
//
// usage: node claude_routines.mjs PATH_TO_claude.exe
// stdin: JSON lines, one question each:
//   {"routine": "strict", "schema": SCHEMA}  the strict wire schema derivation (LOOP-09)
//   {"routine": "env_int", "value": TEXT}    how an integer environment setting is read
// stdout: one JSON line each: {"answer": ANSWER, "asked": QUESTION} where ANSWER is the
//         routine's own ({"ok": true, "schema": ...} / {"ok": false, "reason": ...}; the
//         number read, or null for unset) and QUESTION as JavaScript holds it (keys in
//         JavaScript's order); or {"fault": MESSAGE}.
import fs from "node:fs";
import readline from "node:readline";

const HEAD = "// @bun @bytecode\n";
const CHUNK = 16 * 1024 * 1024;
const MODULE_LIMIT = 1024 * 1024;

// The byte offset of the first occurrence of `marker`, reading the file in chunks.
function find(fd, size, marker) {
  const needle = Buffer.from(marker);
  const buffer = Buffer.alloc(CHUNK + needle.length);
  for (let start = 0; start < size; start += CHUNK) {
    const read = fs.readSync(fd, buffer, 0, CHUNK + needle.length, start);
    const at = buffer.subarray(0, read).indexOf(needle);
    if (at >= 0) return start + at;
  }
  throw new Error(`${marker} is not in the binary (another version?)`);
}

// The module around offset `at`: from its "@bun @bytecode" header to its export list.
function moduleAt(fd, size, at) {
  const from = Math.max(0, at - MODULE_LIMIT);
  const span = Buffer.alloc(Math.min(size - from, 2 * MODULE_LIMIT));
  fs.readSync(fd, span, 0, span.length, from);
  const text = span.toString("latin1");
  const local = at - from;
  const start = text.lastIndexOf(HEAD, local);
  const exportAt = text.indexOf("\nexport{", local);
  const end = text.indexOf("}", exportAt);
  if (start < 0 || exportAt < 0 || end < 0) throw new Error("cannot delimit the module");
  return span.subarray(start, end + 1).toString("utf8");
}

// A stand-in for everything the routine does not use: callable, constructible, any property.
function stub() {
  const handler = {
    get: (_target, key) => (key === Symbol.toPrimitive ? () => "" : proxy),
    apply: () => proxy,
    construct: () => proxy,
  };
  const proxy = new Proxy(function stand() {}, handler);
  return proxy;
}

const IMPORT = /import\{([^}]*)\}from"[^"]*";/g;
const EXPORT = /\nexport\{([^}]*)\};?\s*$/;

// Evaluate a module's text; `given` supplies some of its imports, the others are stubs.
function evaluate(text, given) {
  const names = [];
  const body = text.replace(IMPORT, (_all, list) => {
    for (const item of list.split(",")) names.push(item.split(" as ").pop().trim());
    return "";
  });
  const exported = EXPORT.exec(body);
  if (exported === null) throw new Error("the module has no export list");
  const pairs = exported[1].split(",").map((item) => {
    const [local, outside] = item.split(" as ").map((part) => part.trim());
    return `${JSON.stringify(outside ?? local)}: ${local}`;
  });
  const code = `${body.slice(0, exported.index)}\nreturn {${pairs.join(", ")}};`;
  const values = names.map((name) => (name in given ? given[name] : stub()));
  return new Function(...names, code)(...values);
}

function load(path) {
  const fd = fs.openSync(path, "r");
  try {
    const size = fs.fstatSync(fd).size;
    const helper = evaluate(moduleAt(fd, size, find(fd, size, "function A(n){return typeof n")), {});
    const strict = evaluate(moduleAt(fd, size, find(fd, size, "function aXo(e){")), { A: helper.A });
    if (typeof strict.aXo !== "function") throw new Error("aXo is not a function");
    const numbers = evaluate(moduleAt(fd, size, find(fd, size, "function Ym(e){")), {});
    const env = evaluate(moduleAt(fd, size, find(fd, size, "rawStr:()=>s,bool:()=>a")), {
      RGi: numbers.RGi,
      Ym: numbers.Ym,
    });
    if (typeof env.H?.int !== "function") throw new Error("the environment reader has no int()");
    const reader = env.H.int();
    return {
      strict: (request) => ({ answer: strict.aXo(request.schema), asked: request.schema }),
      env_int: (request) => ({ answer: reader.parse(request.value ?? undefined) ?? null, asked: request.value }),
    };
  } finally {
    fs.closeSync(fd);
  }
}

const routines = load(process.argv[2]);
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let reply;
  try {
    const request = JSON.parse(line);
    const routine = routines[request.routine];
    reply = routine === undefined ? { fault: `no routine ${request.routine}` } : routine(request);
  } catch (error) {
    reply = { fault: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
});
