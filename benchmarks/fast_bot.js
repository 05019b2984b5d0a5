// The benches' fast bot in Node (benchmarks/fast_bot.py starts it; its docstring says what
// it answers). Usage: node fast_bot.js PORT [first|random]
//
// Built on `net`, not `http`: Node's HTTP server and a JSON.parse of the whole act message
// cost as much CPU a request as the referee it is there to measure. This reads the request
// head for Content-Length and finds the legal list's elements with a bracket scan.
"use strict";
const net = require("net");
const port = Number(process.argv[2]);
const pickRandom = process.argv[3] === "random";
const OK = Buffer.from('{"ok":true}');

function legalElements(body, all) {
  // [start, end) of each element of "legal" (the act message's last field, so its key is
  // the last one); only the first unless `all`
  const at = body.lastIndexOf('"legal":');
  if (at < 0) return [];
  const out = [];
  let i = body.indexOf("[", at) + 1;
  let start = i;
  let depth = 0;
  let str = false;
  for (; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (str) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) str = false;
    } else if (c === 34) str = true;
    else if (c === 91 || c === 123) depth++;
    else if (depth > 0) {
      if (c === 93 || c === 125) depth--;
    } else if (c === 44 || c === 93 || c === 125) {
      // a comma or the closing bracket at the top level: one element ends
      if (i > start) out.push([start, i]);
      if (c !== 44 || !all) break;
      start = i + 1;
    }
  }
  return out;
}

function reply(body) {
  let out = OK;
  if (body.indexOf('"type":"act"') >= 0) {
    const found = legalElements(body, pickRandom);
    if (found.length > 0) {
      const [start, end] = found[pickRandom ? Math.floor(Math.random() * found.length) : 0];
      out = Buffer.from('{"action":' + body.slice(start, end) + "}");
    }
  }
  return Buffer.concat([
    Buffer.from("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + out.length + "\r\n\r\n"),
    out,
  ]);
}

const server = net.createServer((sock) => {
  sock.setNoDelay(true);
  let buf = Buffer.alloc(0);
  sock.on("data", (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buf.toString("latin1", 0, end).toLowerCase();
      const m = /content-length:\s*(\d+)/.exec(head);
      const length = m ? Number(m[1]) : 0;
      if (buf.length < end + 4 + length) return;
      const body = buf.toString("utf8", end + 4, end + 4 + length);
      buf = buf.subarray(end + 4 + length);
      sock.write(reply(body));
    }
  });
  sock.on("error", () => sock.destroy());
});
server.listen(port, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}/`));
process.on("SIGTERM", () => process.exit(0));
