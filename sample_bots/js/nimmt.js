// A sample bot for 6 nimmt! Plus (game id "nimmt_plus") in JavaScript: Node, standard library only.
//
//   node sample_bots/js/nimmt.js --port 8001
//
// The referee POSTs JSON messages (sample_bots/README.md, docs/games/nimmt_plus.md); only
// "act" needs an answer: {"action": X} with X one element of message.legal. Everything
// else ("hello", "start", "end") gets {"ok": true}.
//
// Strategy "careful": for every legal action, place its own numbered cards alone on the
// current rows (as the rules place them: onto the row whose end is the highest below the
// card, else onto the row with the highest end; a 6th card takes the row) and count the
// bull heads taken. Taking is good in "plus"/"plus_dealt_zeros" and bad in the others
// (state.lower_is_better says which). Ties: keep zeros, play fewer cards, fit tightest.
//
// What every bot must get right, shown here:
// - one process serves many matches at once (and every seat of a team match): state kept
//   between decisions is keyed by (tournament, match, seat), begun afresh at "start" and
//   dropped at "end" (docs/protocol.md, "Your bot's memory");
// - the answer depends only on the message, so a decision asked again (same decision
//   number, after the referee voided it) is answered the same way: safe to answer twice;
// - keep-alive: the referee reuses connections, so the idle timeout is long;
// - bind 127.0.0.1 (not "localhost", which may resolve to ::1), take the port from
//   --port, and exit on SIGTERM (the referee stops managed bots with it);
// - answer only the referee: every request it sends carries "Authorization: Bearer <token>"
//   with the token in REFEREE_BOT_TOKEN; anything else gets 401 (no token set: accept all).
"use strict";

const crypto = require("node:crypto");
const http = require("node:http");

const BEARER = process.env.REFEREE_BOT_TOKEN ? Buffer.from(`Bearer ${process.env.REFEREE_BOT_TOKEN}`) : null;

const ROW_LIMIT = 5;

function heads(card) {
  if (card === 0) return 0;
  if (card === 55) return 7;
  if (card % 11 === 0) return 5;
  if (card % 10 === 0) return 3;
  if (card % 5 === 0) return 2;
  return 1;
}

// Index of the row a card goes to: the highest end below it, else the highest end.
function targetRow(rows, card) {
  let best = -1, bestEnd = -1, high = 0, highEnd = -1;
  rows.forEach((row, i) => {
    const end = row[row.length - 1];
    if (end < card && end > bestEnd) { best = i; bestEnd = end; }
    if (end > highEnd) { high = i; highEnd = end; }
  });
  return best >= 0 ? best : high;
}

// Rows after placing one card alone, and the heads it takes.
function place(rows, card) {
  const i = targetRow(rows, card);
  const next = rows.map((r) => r.slice());
  if (next[i].length === ROW_LIMIT) {
    const taken = next[i].reduce((sum, c) => sum + heads(c), 0);
    next[i] = [card];
    return [next, taken];
  }
  next[i].push(card);
  return [next, 0];
}

function careful(state, legal) {
  const sign = state.lower_is_better ? -1 : 1;
  let best = legal[0], bestKey = null;
  for (const action of legal) {
    let rows = state.rows, gained = 0, gap = 0;
    for (const card of action) {
      if (card === 0) continue; // a 0 goes onto the player's own pile
      const end = rows[targetRow(rows, card)].slice(-1)[0];
      gap += card > end ? card - end : 1000; // a card below every row is a last resort
      let taken;
      [rows, taken] = place(rows, card);
      gained += taken;
    }
    const zeros = action.filter((c) => c === 0).length;
    const key = [sign * gained, -zeros, -action.length, -gap];
    if (bestKey === null || greater(key, bestKey)) { best = action; bestKey = key; }
  }
  return best;
}

function greater(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

// Per (tournament, match, seat): what this seat has done so far; only for the optional "log" field.
const seats = new Map();

function answer(message) {
  const key = JSON.stringify([message.tournament, message.match, message.seat]);
  if (message.type === "start" || message.type === "end") { seats.delete(key); return { ok: true }; }
  if (message.type !== "act") return { ok: true };
  const action = careful(message.state, message.legal);
  const mine = seats.get(key) || { decisions: new Set() };
  mine.decisions.add(message.decision); // a Set: a re-asked decision is not counted twice
  seats.set(key, mine);
  return { action, log: `careful: ${JSON.stringify(action)} (${mine.decisions.size} decisions so far)` };
}

// True when the request carries the referee's token (always, when no token is set).
function fromReferee(req) {
  if (BEARER === null) return true;
  const given = Buffer.from(req.headers.authorization || "", "latin1");
  return given.length === BEARER.length && crypto.timingSafeEqual(given, BEARER);
}

function main() {
  const at = process.argv.indexOf("--port");
  const port = at > 0 ? Number(process.argv[at + 1]) : NaN;
  if (!Number.isInteger(port)) {
    console.error("usage: node nimmt.js --port N");
    process.exit(2);
  }
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      let status = 200, reply;
      try {
        if (fromReferee(req)) {
          reply = answer(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        } else {
          status = 401;
          reply = { error: "missing or wrong token" };
        }
      } catch (err) {
        status = 400;
        reply = { error: String(err) };
      }
      const body = Buffer.from(JSON.stringify(reply));
      res.writeHead(status, { "Content-Type": "application/json", "Content-Length": body.length });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000; // the referee keeps connections open between decisions
  server.headersTimeout = 65_000;
  server.listen(port, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${port}/`));
  process.on("SIGTERM", () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

main();
