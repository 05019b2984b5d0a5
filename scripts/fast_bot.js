// A bot that costs next to nothing (for `make bench-scale`): answers every act with the
// first legal action, everything else with {"ok": true}. Usage: node fast_bot.js PORT
"use strict";
const http = require("http");
const port = Number(process.argv[2]);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    let reply = { ok: true };
    try {
      const msg = JSON.parse(Buffer.concat(chunks));
      if (msg.type === "act") reply = { action: msg.legal[0] };
    } catch (e) {
      res.writeHead(400);
      res.end();
      return;
    }
    const body = JSON.stringify(reply);
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(port, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${port}/`));
process.on("SIGTERM", () => process.exit(0));
