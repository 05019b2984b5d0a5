// A bot that costs next to nothing (for `make bench-scale`): answers every act with the
// first legal action, everything else with {"ok": true}. Usage: node fast_bot.js PORT
//
// Built on `net`, not `http`: Node's HTTP server and a JSON.parse of the whole 2.7 KB
// act message cost ~95 µs of CPU a request on the bench machine, as much as the referee
// it is there to measure. This reads the request head for Content-Length and takes the
// first element of "legal" (the act message's last field) with a bracket scan: ~20 µs.
"use strict";
const net = require("net");
const port = Number(process.argv[2]);
const OK = Buffer.from('{"ok":true}');

function firstLegal(body) {
  // the text of legal[0]: legal is the act message's last field, so its key is the last one
  const at = body.lastIndexOf('"legal":');
  if (at < 0) return null;
  let i = body.indexOf("[", at) + 1;
  const start = i;
  let depth = 0;
  let str = false;
  for (; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (str) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) str = false;
    } else if (c === 34) str = true;
    else if (c === 91 || c === 123) depth++;
    else if (c === 93 || c === 125) {
      if (depth === 0) break;
      depth--;
    } else if (c === 44 && depth === 0) break;
  }
  return i > start ? body.slice(start, i) : null;
}

function reply(body) {
  let out = OK;
  if (body.indexOf('"type":"act"') >= 0) {
    const first = firstLegal(body);
    if (first !== null) out = Buffer.from('{"action":' + first + "}");
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
