// Drahtseilakt's replay engine: the views of a match rebuilt from its seed and moves, exactly as
// referee/match/frames.py::frames(game, options, seed, n, moves, after=True) computes them with
// referee/games/drahtseilakt/rules.py (the shape: replay data format 1, referee/store/replay_data.py).
// Sets G.rebuild(doc, options) and nothing else: its own scope, so it can sit beside other files.
// The deal is CPython's random.Random and shuffle: PyRandom (referee/games/pyrandom.js), inlined first.
(function () {
  "use strict";

  // The rules (rules.py): the same state, the same steps.
  const TRICKS = 9;
  const HAND = 9;
  const RED0 = "red0";
  const BLUE0 = "blue0";
  const SCORE_CARDS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", RED0, BLUE0];
  const ORDER = {};
  SCORE_CARDS.forEach((c, i) => (ORDER[c] = i));
  const asc = (a, b) => a - b;
  const filled = (n, f) => Array.from({ length: n }, f);

  function setup(n, seed, options) {
    const st = {
      seats: n,
      tactical: options.tactical === true,
      chaotic: options.chaotic === true,
      rng: PyRandom.seeded(seed),
      maxCard: options.tactical === true ? HAND * n : 50,
      round: 0,
      dealer: 0,
      leader: 1,
      trick: 0,
      turn: null,
      rawScores: filled(n, () => []),
      cancelled: filled(n, () => []),
      previous: null,
      over: false,
    };
    startRound(st);
    return st;
  }

  function startRound(st) {
    const n = st.seats;
    const deck = filled(st.maxCard, (_, i) => i + 1);
    st.rng.shuffle(deck);
    st.hands = filled(n, (_, s) => deck.slice(HAND * s, HAND * (s + 1)).sort(asc));
    st.scoreDeck = SCORE_CARDS.slice();
    st.rng.shuffle(st.scoreDeck);
    st.history = [];
    st.plays = [];
    st.pending = filled(n, () => null);
    st.red = filled(n, () => 0);
    st.blue = filled(n, () => 0);
    st.dealer = st.round;
    st.leader = (st.dealer + 1) % n;
    st.trick = 0;
    startTrick(st);
  }

  function startTrick(st) {
    st.plays = [];
    st.turn = st.chaotic ? null : st.leader;
    const first = st.scoreDeck.pop();
    const cards = [first];
    if (first === RED0 || first === BLUE0) {
      const second = st.scoreDeck.pop();
      cards.push(second);
      if (second === RED0 || second === BLUE0) {
        const third = st.scoreDeck.pop();
        cards.push(third);
        st.redValue = st.blueValue = parseInt(third, 10);
      } else if (first === RED0) {
        st.redValue = 0;
        st.blueValue = parseInt(second, 10);
      } else {
        st.redValue = parseInt(second, 10);
        st.blueValue = 0;
      }
    } else {
      st.redValue = st.blueValue = parseInt(first, 10);
    }
    st.trickCards = cards;
  }

  function finishTrick(st) {
    let hi = st.plays[0];
    let lo = st.plays[0];
    for (const p of st.plays) {
      if (p[1] > hi[1]) hi = p;
      if (p[1] < lo[1]) lo = p;
    }
    let blueTo = null;
    let redTo = null;
    if (st.blueValue) {
      st.blue[hi[0]] += st.blueValue;
      blueTo = hi[0];
    }
    if (st.redValue) {
      st.red[lo[0]] += st.redValue;
      redTo = lo[0];
    }
    for (const s of [hi[0], lo[0]]) {
      const pairs = Math.min(st.red[s], st.blue[s]);
      st.red[s] -= pairs;
      st.blue[s] -= pairs;
    }
    st.history.push({
      leader: st.leader,
      score_cards: st.trickCards.slice(),
      red: st.redValue,
      blue: st.blueValue,
      plays: st.plays.map((p) => ({ seat: p[0], card: p[1] })),
      blue_to: blueTo,
      red_to: redTo,
    });
    st.plays = [];
    st.leader = hi[0];
    st.trick += 1;
    if (st.trick < TRICKS) startTrick(st);
    else finishRound(st);
  }

  const effective = (raw, cancelled) => raw.map((v, r) => (cancelled.includes(r) ? 0 : v));
  const totals = (st) => st.rawScores.map((raw, s) => effective(raw, st.cancelled[s]).reduce((a, b) => a + b, 0));

  function finishRound(st) {
    const n = st.seats;
    for (let s = 0; s < n; s++) {
      const score = st.red[s] + st.blue[s];
      if (score === 0 && st.round > 0) {
        const earlier = effective(st.rawScores[s], st.cancelled[s]);
        const best = Math.max(...earlier);
        if (best > 0) st.cancelled[s].push(earlier.indexOf(best));
      }
      st.rawScores[s].push(score);
    }
    st.round += 1;
    if (st.round < n) {
      st.previous = { round: st.round - 1, dealer: st.dealer, tricks: st.history.map(copyTrick) };
      startRound(st);
    } else {
      st.over = true;
      st.turn = null;
      st.plays = [];
      st.pending = filled(n, () => null);
    }
  }

  function copyTrick(t) {
    return {
      leader: t.leader,
      score_cards: t.score_cards.slice(),
      red: t.red,
      blue: t.blue,
      plays: t.plays.map((p) => ({ seat: p.seat, card: p.card })),
      blue_to: t.blue_to,
      red_to: t.red_to,
    };
  }

  function toAct(st) {
    if (st.over) return [];
    if (st.chaotic) return filled(st.seats, (_, s) => s).filter((s) => st.pending[s] === null);
    return st.turn === null ? [] : [st.turn];
  }

  function apply(st, seat, action) {
    const hand = st.hands[seat];
    const at = typeof action === "number" && Number.isInteger(action) ? hand.indexOf(action) : -1;
    if (at < 0) throw new Error(`${JSON.stringify(action)} is not a card in seat ${seat}'s hand`);
    hand.splice(at, 1);
    if (st.chaotic) {
      st.pending[seat] = action;
      if (st.pending.includes(null)) return;
      st.plays = filled(st.seats, (_, i) => (st.leader + i) % st.seats).map((s) => [s, st.pending[s]]);
      st.pending = filled(st.seats, () => null);
      finishTrick(st);
      return;
    }
    st.plays.push([seat, action]);
    if (st.plays.length < st.seats) st.turn = (seat + 1) % st.seats;
    else finishTrick(st);
  }

  function view(st, seat) {
    const n = st.seats;
    const played = new Set(st.plays.map((p) => p[0]));
    const left = TRICKS - st.trick;
    return {
      seat: seat,
      players: n,
      tactical: st.tactical,
      chaotic: st.chaotic,
      highest_card: st.maxCard,
      round: st.round,
      rounds: n,
      dealer: st.dealer,
      trick: st.trick,
      tricks_per_round: TRICKS,
      leader: st.leader,
      turn: st.chaotic ? null : st.turn,
      your_turn: !st.over && (st.chaotic ? st.pending[seat] === null : st.turn === seat),
      hand: st.hands[seat].slice(),
      hand_sizes: filled(n, (_, s) => (st.over ? 0 : left - (played.has(s) ? 1 : 0))),
      chosen: st.chaotic ? st.pending[seat] : null,
      score: { cards: st.trickCards.slice(), red: st.redValue, blue: st.blueValue },
      current_trick: st.plays.map((p) => ({ seat: p[0], card: p[1] })),
      tricks: st.history.map(copyTrick),
      score_cards_unrevealed: st.scoreDeck.slice().sort((a, b) => ORDER[a] - ORDER[b]),
      sticks: filled(n, (_, s) => ({ red: st.red[s], blue: st.blue[s] })),
      round_scores: st.rawScores.map((r) => r.slice()),
      cancelled: st.cancelled.map((c) => c.slice()),
      totals: totals(st),
      previous_round: st.trick === 0 && !st.over ? st.previous : null,
    };
  }

  // The views of a match, each stored once whole; a seat's unchanged view is the same index.
  function Table(n) {
    this.views = [];
    this.last = filled(n, () => null);
  }

  Table.prototype.ref = function (seat, v) {
    const text = JSON.stringify(v);
    const prev = this.last[seat];
    if (prev !== null && prev.text === text) return prev.index;
    this.views.push({ f: v });
    this.last[seat] = { index: this.views.length - 1, text: text };
    return this.views.length - 1;
  };

  // Drahtseilakt has no reply fields besides the action: doc.extras changes nothing (the
  // rules' apply_extras keeps the state), as in frames().
  G.rebuild = function (doc, options) {
    const n = doc.bots.length;
    const seats = doc.seat;
    const actions = doc.action;
    const st = setup(n, String(doc.seed), options);
    const table = new Table(n);
    const out = { views: table.views, start: [], sent: [], after: [], legal: [] };
    let now = filled(n, (_, s) => table.ref(s, view(st, s)));
    out.start = now.slice();
    let i = 0;
    while (!st.over && i < seats.length) {
      const group = toAct(st).map((s) => [s, now[s], st.hands[s].length]);
      for (const [s, sent, nLegal] of group) {
        if (i >= seats.length) return out;
        if (seats[i] !== s) throw new Error(`decision ${i + 1} is seat ${seats[i]}'s, the rules ask seat ${s}`);
        try {
          apply(st, s, actions[i]);
        } catch (e) {
          throw new Error(`decision ${i + 1} is refused by the rules: ${e.message}`);
        }
        now = filled(n, (_, k) => table.ref(k, view(st, k)));
        out.sent.push(sent);
        out.after.push(now);
        out.legal.push(nLegal);
        i++;
      }
    }
    return out;
  };
})();
