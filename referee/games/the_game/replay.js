// The Game's replay engine (issue 35): rebuilds every seat's view of a match from its seed and
// moves, exactly as referee/match/frames.py (after=True) and rules.py compute them; the output is
// replay data format 1 (referee/store/replay_data.py). The viewer inlines it in its IIFE where `G`,
// PyRandom (referee/games/pyrandom.js) and ViewTable (referee/games/viewtable.js) exist; nothing
// else leaks into scope.
G.rebuild = (function () {
  "use strict";
  const TOTAL = 98;
  const PILES = 4;
  const UP = [true, true, false, false];
  const START_TOPS = [1, 1, 100, 100];
  const DIRECTION = ["up", "up", "down", "down"];
  const FIRE_CARDS = new Set([22, 33, 44, 55, 66, 77]);
  const HAND_SIZE = { 1: 8, 2: 7, 3: 6, 4: 6, 5: 6 };
  const END = "end";

  function fits(card, top, up) {
    return up ? card > top || card === top - 10 : card < top || card === top + 10;
  }

  function anyPlacement(hand, tops) {
    return hand.some((c) => tops.some((t, p) => fits(c, t, UP[p])));
  }

  function hasSequence(hand, tops, k) {
    if (k <= 0) return true;
    if (k === 1) return anyPlacement(hand, tops);
    for (let i = 0; i < hand.length; i++) {
      const c = hand[i];
      for (let p = 0; p < PILES; p++) {
        if (!fits(c, tops[p], UP[p])) continue;
        const old = tops[p];
        tops[p] = c;
        const ok = hasSequence(hand.slice(0, i).concat(hand.slice(i + 1)), tops, k - 1);
        tops[p] = old;
        if (ok) return true;
      }
    }
    return false;
  }

  const ascending = (a, b) => a - b;

  function setup(n, seed, opts) {
    const st = {
      n,
      opts,
      handSize: HAND_SIZE[n] - (opts.reduced_hand ? 1 : 0),
      baseMinimum: opts.pro ? 3 : 2,
      hands: [],
      deck: [],
      piles: [[], [], [], []],
      tops: START_TOPS.slice(),
      active: 0,
      turn: 1,
      placed: 0,
      minimum: 0,
      placedTotal: 0,
      claims: Array.from({ length: n }, () => []),
      fire: [],
      over: false,
    };
    const deck = [];
    for (let c = 2; c < 100; c++) deck.push(c);
    PyRandom.seeded(seed).shuffle(deck);
    for (let s = 0; s < n; s++) st.hands.push(deck.splice(deck.length - st.handSize).sort(ascending));
    st.deck = deck;
    startTurn(st);
    return st;
  }

  function nextSeat(st) {
    for (let i = 1; i <= st.n; i++) {
      const s = (st.active + i) % st.n;
      if (st.hands[s].length) return s;
    }
    return st.active;
  }

  function startTurn(st) {
    st.placed = 0;
    st.minimum = st.deck.length ? st.baseMinimum : 1;
    if (!hasSequence(st.hands[st.active], st.tops.slice(), st.minimum)) st.over = true;
  }

  function endTurn(st) {
    const hand = st.hands[st.active];
    const k = Math.min(st.placed, st.deck.length);
    if (k) {
      hand.push(...st.deck.splice(st.deck.length - k));
      hand.sort(ascending);
    }
    if (st.fire.some((f) => f.deadline_turn <= st.turn)) {
      st.over = true;
      return;
    }
    st.active = nextSeat(st);
    st.turn += 1;
    startTurn(st);
  }

  function isInt(v) {
    return typeof v === "number" && Number.isInteger(v);
  }

  // rules.py apply: the transcript holds accepted moves, so a refusal means damaged data
  function apply(st, seat, action) {
    if (st.over) throw new Error("the game is over");
    if (seat !== st.active) throw new Error(`seat ${seat} is not to act (seat ${st.active} is)`);
    if (action === END) {
      if (st.placed < st.minimum) throw new Error(`cannot end the turn: ${st.placed} of the minimum ${st.minimum} placed`);
      endTurn(st);
      return;
    }
    const keys = action && typeof action === "object" && !Array.isArray(action) ? Object.keys(action).sort() : [];
    if (keys.length !== 2 || keys[0] !== "card" || keys[1] !== "pile") {
      throw new Error(`expected {"card": c, "pile": p} or "end", got ${JSON.stringify(action)}`);
    }
    const card = action.card;
    const pile = action.pile;
    if (!isInt(card) || !isInt(pile)) throw new Error(`card and pile must be integers, got ${JSON.stringify(action)}`);
    if (pile < 0 || pile >= PILES) throw new Error(`no pile ${pile}`);
    const hand = st.hands[seat];
    const at = hand.indexOf(card);
    if (at < 0) throw new Error(`card ${card} is not in the hand`);
    if (!fits(card, st.tops[pile], UP[pile])) throw new Error(`card ${card} cannot go on pile ${pile}`);
    hand.splice(at, 1);
    st.piles[pile].push(card);
    st.tops[pile] = card;
    st.placed += 1;
    st.placedTotal += 1;
    if (st.fire.length) st.fire = st.fire.filter((f) => f.pile !== pile);
    if (st.opts.on_fire && FIRE_CARDS.has(card)) {
      st.fire.push({ card, pile, placed_turn: st.turn, deadline_turn: st.turn + 1 });
    }
    if (st.placedTotal === TOTAL) {
      st.over = true;
    } else if (!anyPlacement(hand, st.tops)) {
      if (st.placed < st.minimum) st.over = true;
      else endTurn(st);
    }
  }

  // rules.py apply_extras; claims the rules refuse (InvalidExtras) change nothing, as in frames.py
  function applyExtras(st, seat, extras) {
    if (!Object.prototype.hasOwnProperty.call(extras, "claims")) return;
    const claims = extras.claims;
    if (st.opts.communication === "none") return;
    if (!Array.isArray(claims)) return;
    if (!claims.every((p) => isInt(p) && p >= 0 && p < PILES)) return;
    if (new Set(claims).size !== claims.length) return;
    st.claims[seat] = claims.slice().sort(ascending);
  }

  function view(st, seat) {
    const deadlineSeat = (turn) => (turn <= st.turn || st.over ? st.active : nextSeat(st));
    return {
      seat,
      players: st.n,
      turn: st.turn,
      turn_number: st.turn,
      active: st.active,
      your_turn: !st.over && seat === st.active,
      hand: st.hands[seat].slice(),
      hand_sizes: st.hands.map((h) => h.length),
      draw_pile: st.deck.length,
      piles: st.piles.map((cards, p) => ({ direction: DIRECTION[p], top: st.tops[p], cards: cards.slice() })),
      minimum: st.minimum,
      placed_this_turn: st.placed,
      cards_left: TOTAL - st.placedTotal,
      communication: st.opts.communication,
      claims: st.claims.map((c) => c.slice()),
      fire: st.fire.map((f) => ({
        card: f.card,
        pile: f.pile,
        placed_turn: f.placed_turn,
        deadline_turn: f.deadline_turn,
        deadline_seat: deadlineSeat(f.deadline_turn),
      })),
      over: st.over,
    };
  }

  function legalCount(st, seat) {
    if (st.over || seat !== st.active) return 0;
    let count = st.placed >= st.minimum ? 1 : 0;
    for (const c of st.hands[seat]) for (let p = 0; p < PILES; p++) if (fits(c, st.tops[p], UP[p])) count++;
    return count;
  }

  // frames.py with after=True: the deciding seat was sent its current view; every seat's view
  // is taken again once the decision (and its extras) is applied.
  return function rebuild(doc, options) {
    const n = doc.bots.length;
    const st = setup(n, doc.seed, options);
    const tab = ViewTable(n);
    const start = [];
    for (let s = 0; s < n; s++) start.push(tab.ref(s, view(st, s)));
    const now = start.slice();
    const sent = [];
    const after = [];
    const legal = [];
    const extras = doc.extras || {};
    // a decision with a fault had its extras refused in play (or none at all): they change
    // nothing, even those this engine could not tell from good ones (a claim of 1.0 reads as 1)
    const faulted = doc.fault || {};
    const seats = doc.seat || [];
    for (let i = 0; i < seats.length && !st.over; i++) {
      const seat = seats[i];
      if (seat !== st.active) throw new Error(`decision ${i + 1} is seat ${seat}'s, the rules ask seat ${st.active}`);
      legal.push(legalCount(st, seat));
      sent.push(now[seat]);
      try {
        apply(st, seat, doc.action[i]);
      } catch (err) {
        throw new Error(`decision ${i + 1} (${JSON.stringify(doc.action[i])}) is refused by the rules: ${err.message}`);
      }
      const ex = extras[String(i)];
      if (ex && typeof ex === "object" && Object.keys(ex).length && !faulted[String(i)]) applyExtras(st, seat, ex);
      for (let s = 0; s < n; s++) now[s] = tab.ref(s, view(st, s));
      after.push(now.slice());
    }
    return { views: tab.views, start, sent, after, legal };
  };
})();
