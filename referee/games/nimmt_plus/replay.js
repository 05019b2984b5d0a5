// 6 nimmt! Plus rebuilt in the browser from a match's moves (issue 35): G.rebuild(doc, options)
// returns the views of replay data format 1 (referee/store/replay_data.py), exactly those
// referee/match/frames.py::frames(game, options, seed, n, moves, after=True) yields with the
// rules of rules.py, stored as replay_data's _Views stores them (same entries, same indexes).
// The deal is CPython's random.Random(seed) and Random.shuffle (PyRandom, referee/games/pyrandom.js);
// the views are stored by ViewTable (referee/games/viewtable.js): the viewer inlines both first.
G.rebuild = (function () {
  'use strict';
  const TOP = 104, ZEROS = 7, ROWS = 4, ROW_LIMIT = 5, HAND_SIZE = 15, SIMPLE_HAND_SIZE = 12;
  const POSITIVE = { plus: true, plus_dealt_zeros: true };
  const HEADS = [0];
  for (let c = 1; c <= TOP; c++) HEADS.push(c === 55 ? 7 : c % 11 === 0 ? 5 : c % 10 === 0 ? 3 : c % 5 === 0 ? 2 : 1);

  function deal(st) {
    const n = st.seats;
    st.hand_number += 1;
    const cards = [];
    for (let c = 1; c <= TOP; c++) cards.push(c);
    st.rng.shuffle(cards);
    st.rows = cards.slice(0, ROWS).map((c) => [c]);
    const given = st.variant === 'plus_dealt_zeros' ? (n <= 3 ? 2 : 1) : 0;
    const hands = [];
    for (let s = 0; s < n; s++) hands.push(new Array(given).fill(0));
    const deck = cards.slice(ROWS).concat(new Array(ZEROS - given * n).fill(0));
    st.rng.shuffle(deck);
    const size = (st.variant === 'simple' ? SIMPLE_HAND_SIZE : HAND_SIZE) - given;
    for (let s = 0; s < n; s++) {
      hands[s] = hands[s].concat(deck.slice(s * size, (s + 1) * size)).sort((a, b) => a - b);
    }
    st.hands = hands;
    st.piles = hands.map(() => []);
    st.pile_heads = hands.map(() => 0);
    st.pending = hands.map(() => null);
    st.history = [];
    if (st.variant === 'simple') {
      st.starter = st.hand_number === 1 ? 0 : st.totals.indexOf(Math.max(...st.totals));
      st.turn = st.starter;
    }
  }

  function setup(n, seed, options) {
    const st = {
      seats: n, variant: options.variant || 'plus', zero_heads: options.zero_heads || 0, rng: PyRandom.seeded(seed),
      hands_total: n, hand_number: 0, totals: new Array(n).fill(0), hand_scores: [],
      previous: null, turn: 0, starter: 0, over: false,
    };
    deal(st);
    return st;
  }

  function distinct(hand) {
    return hand.filter((c, i) => i === 0 || c !== hand[i - 1]);
  }

  function toAct(st) {
    if (st.over) return [];
    if (st.variant === 'simple') return [st.turn];
    const out = [];
    for (let s = 0; s < st.seats; s++) if (st.hands[s].length && st.pending[s] === null) out.push(s);
    return out;
  }

  function legalCount(st, seat) {
    if (st.over) return 0;
    const hand = st.hands[seat];
    const d = distinct(hand).length;
    if (st.variant === 'simple') return seat === st.turn ? d : 0;
    if (!hand.length || st.pending[seat] !== null) return 0;
    return d + (hand.length >= 2 && hand[1] === 0 ? 1 : 0) + (d * (d - 1)) / 2;
  }

  function view(st, seat) {
    const simple = st.variant === 'simple', n = st.seats;
    let asked, mine;
    if (st.over) {
      asked = [];
      mine = false;
    } else if (simple) {
      asked = [st.turn];
      mine = seat === st.turn;
    } else {
      asked = [];
      for (let s = 0; s < n; s++) if (st.hands[s].length) asked.push(s);
      mine = st.hands[seat].length > 0 && st.pending[seat] === null;
    }
    const zh = POSITIVE[st.variant] ? st.zero_heads : 0;
    return {
      variant: st.variant,
      lower_is_better: !POSITIVE[st.variant],
      zero_heads: st.zero_heads,
      seats: n,
      seat: seat,
      hand_number: st.hand_number,
      hands_total: st.hands_total,
      turn_number: st.history.length + 1,
      hand: st.hands[seat].slice(),
      rows: st.rows.map((r) => r.slice()),
      hand_sizes: st.hands.map((h) => h.length),
      points: st.piles.map((p, s) => ({
        cards: p.slice(),
        heads: st.pile_heads[s] + (zh ? zh * p.filter((c) => c === 0).length : 0),
      })),
      totals: st.totals.slice(),
      hand_scores: st.hand_scores.map((h) => h.slice()),
      history: st.history.slice(),  // entries are never changed once recorded: shared
      previous_hand: st.history.length < (simple ? n : 1) ? st.previous : null,
      to_act: asked,
      your_turn: mine,
      turn: simple && !st.over ? st.turn : null,
    };
  }

  function refuse(action, why) {
    throw new Error(`${JSON.stringify(action)}: ${why}`);
  }

  function parse(action) {
    if (!Array.isArray(action) || action.length < 1 || action.length > 2) refuse(action, 'expected a list of 1 or 2 cards');
    for (const c of action) if (typeof c !== 'number' || !Number.isInteger(c)) refuse(action, 'cards are integers');
    if (action.length === 2 && action[0] > action[1]) refuse(action, 'cards must be in ascending order');
    return action.slice();
  }

  function checkInHand(hand, cards, action) {
    for (const c of cards) {
      if (hand.filter((h) => h === c).length < cards.filter((x) => x === c).length) refuse(action, 'not in your hand');
    }
  }

  function place(st, card, seat) {
    const rows = st.rows;
    let best = -1, bestEnd = -1, high = 0, highEnd = -1;
    rows.forEach((row, i) => {
      const end = row[row.length - 1];
      if (bestEnd < end && end < card) { best = i; bestEnd = end; }
      if (end > highEnd) { high = i; highEnd = end; }
    });
    const target = best >= 0 ? best : high;
    const row = rows[target];
    let took = [];
    if (row.length === ROW_LIMIT) {
      took = row;
      st.piles[seat].push(...row);
      st.pile_heads[seat] += row.reduce((a, c) => a + HEADS[c], 0);
      rows[target] = [card];
    } else {
      row.push(card);
    }
    return { seat: seat, card: card, row: target, took: took.slice() };
  }

  // plays: [seat, cards] in ascending seat order
  function resolve(st, plays) {
    const first = [], rest = [];
    for (const [s, cards] of plays) {
      const hand = st.hands[s];
      for (const c of cards) {
        hand.splice(hand.indexOf(c), 1);
        if (c === 0) st.piles[s].push(0);
      }
      if (cards.length === 2 && cards[0] === 0) {
        if (cards[1] !== 0) first.push([cards[1], s]);
      } else {
        for (const c of cards) if (c !== 0) rest.push([c, s]);
      }
    }
    const byCard = (a, b) => a[0] - b[0] || a[1] - b[1];
    first.sort(byCard);
    rest.sort(byCard);
    const placements = first.concat(rest).map(([c, s]) => place(st, c, s));
    st.history.push({
      turn: st.history.length + 1,
      plays: plays.map(([s, cards]) => ({ seat: s, cards: cards.slice() })),
      placements: placements,
    });
  }

  function endHand(st) {
    const zh = POSITIVE[st.variant] ? st.zero_heads : 0;
    const scores = st.piles.map((p, s) => st.pile_heads[s] + (zh ? zh * p.filter((c) => c === 0).length : 0));
    st.hand_scores.push(scores);
    st.totals = st.totals.map((t, s) => t + scores[s]);
    if (st.hand_number >= st.hands_total) {
      st.over = true;
      st.pending = st.pending.map(() => null);
      return;
    }
    st.previous = { hand: st.hand_number, history: st.history, rows: st.rows.map((r) => r.slice()) };
    deal(st);
  }

  // Play `action` for `seat`; true when the cards were revealed (every seat's view changes),
  // false for a hidden choice (only the chooser's view changes: its your_turn).
  function apply(st, seat, action) {
    if (st.over || !Number.isInteger(seat) || seat < 0 || seat >= st.seats) throw new Error(`seat ${seat} is not to act`);
    const cards = parse(action);
    if (st.variant === 'simple') {
      if (seat !== st.turn) throw new Error(`seat ${seat} is not to act (seat ${st.turn} is)`);
      if (cards.length !== 1) refuse(action, 'play exactly one card in simple');
      checkInHand(st.hands[seat], cards, action);
      resolve(st, [[seat, cards]]);
      if (!st.hands.some((h) => h.length)) endHand(st);
      else st.turn = (st.turn + 1) % st.seats;
      return true;
    }
    if (!st.hands[seat].length || st.pending[seat] !== null) throw new Error(`seat ${seat} is not to act`);
    checkInHand(st.hands[seat], cards, action);
    st.pending[seat] = cards;
    if (!st.pending.some((p, s) => p === null && st.hands[s].length)) {
      const plays = [];
      st.pending.forEach((p, s) => { if (p !== null) plays.push([s, p]); });
      st.pending = st.pending.map(() => null);
      resolve(st, plays);
      if (!st.hands.some((h) => h.length)) endHand(st);
      return true;
    }
    return false;
  }

  // The game has no extra reply fields (Game.apply_extras keeps the state): doc.extras change nothing.
  return function rebuild(doc, options) {
    const n = doc.bots.length, seats = doc.seat, actions = doc.action;
    const st = setup(n, doc.seed, options);
    const t = ViewTable(n);
    const start = [];
    for (let s = 0; s < n; s++) start.push(t.ref(s, view(st, s)));
    const sent = [], after = [], legal = [];
    let now = start.slice(), i = 0;
    while (!st.over && i < seats.length) {
      const group = toAct(st).map((s) => [s, now[s], legalCount(st, s)]);
      for (const [s, sentIndex, nLegal] of group) {
        if (i >= seats.length) break;
        if (seats[i] !== s) throw new Error(`decision ${i + 1} is seat ${seats[i]}'s, the rules ask seat ${s}`);
        let revealed;
        try {
          revealed = apply(st, s, actions[i]);
        } catch (e) {
          throw new Error(`decision ${i + 1} is refused by the rules: ${e.message}`);
        }
        // a seat's unchanged view keeps its index: only the views that may change are made
        const views = now.slice();
        for (let k = 0; k < n; k++) if (revealed || k === s) views[k] = t.ref(k, view(st, k));
        sent.push(sentIndex);
        legal.push(nLegal);
        after.push(views);
        i++;
        now = views;
      }
    }
    return { views: t.views, start: start, sent: sent, after: after, legal: legal };
  };
})();
