// Dieci's replay engine for the viewer: G.rebuild(doc, options) rebuilds every seat's view
// from the moves alone, exactly as referee/match/frames.py (after=True) over rules.py does.
// Plain ES2020, no globals: the viewer inlines it where `const G={}` and PyRandom
// (referee/games/pyrandom.js: CPython's random.Random and its shuffle) are in scope.
(function () {
  'use strict';

  const RANKS = ['10', '9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '00', '000', '0000', 'jollygatto'];
  const VALUES = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2, -3, -3];
  const DEFAULT_DECK = RANKS.map((_, i) => (VALUES[i] >= 1 ? 4 : 3));
  const LUPO = 1;
  const PUZZOLA = 2;
  const SALTA = 3;
  const BLOCKER_MAX = 4; // rank indices 0..4 are the 6-10 blockers
  const JOLLY = 14;
  const TURN = 'turn';
  const RESPOND = 'respond';
  const DEALER = 'dealer';
  const OVER = 'over';
  const NONE = -1;

  // The state holds what the views need (rules.py's DieciState less the result's record).
  function setup(n, seedText, options) {
    const deck = options.deck || {};
    const rank = [];
    RANKS.forEach((name, r) => {
      const count = deck[name] === undefined ? DEFAULT_DECK[r] : deck[name];
      for (let c = 0; c < count; c++) rank.push(r);
    });
    const st = {
      n,
      rng: PyRandom.seeded(seedText),
      reshuffle: options.reshuffle === undefined ? true : options.reshuffle,
      maxManches: options.max_manches === undefined ? 500 : options.max_manches,
      rank,
      tokens: new Array(n).fill(options.tokens === undefined ? 3 : options.tokens),
      hand: new Array(n).fill(NONE),
      deck: rank.map((_, c) => c),
      used: [],
      manche: 0,
      dealer: 0,
      order: [],
      pos: 0,
      phase: TURN,
      asker: NONE,
      target: NONE,
      revealed: [],
      chainFirst: NONE,
      chainStart: new Map(), // member -> card at the chain's start, in insertion order
      chainReceiver: NONE,
      dealt: [],
      passed: [],
      received: [],
      events: [],
      prevEvents: [],
      prevShown: [], // per seat: previous_events as rendered (the same all manche)
      satOut: Array.from({ length: n }, () => []),
      elimManche: new Array(n).fill(NONE),
    };
    if (!st.reshuffle) st.rng.shuffle(st.deck);
    startManche(st);
    return st;
  }

  const name = (st, card) => RANKS[st.rank[card]];
  const inGame = (st) => st.tokens.filter((t) => t > 0).length;

  function event(st, pub, priv) {
    st.events.push({ pub, priv: priv || null, shown: null });
  }

  // An event as `seat` sees it: the public fields plus its own private ones (made once).
  function shown(ev, seat) {
    if (ev.priv === null || ev.priv[seat] === undefined) return ev.pub;
    if (ev.shown === null) ev.shown = {};
    if (ev.shown[seat] === undefined) ev.shown[seat] = Object.assign({}, ev.pub, ev.priv[seat]);
    return ev.shown[seat];
  }

  const render = (events, seat) => events.map((ev) => shown(ev, seat));

  function keepMissed(st) {
    if (st.manche === 0) return;
    const played = new Set(st.order);
    for (let s = 0; s < st.n; s++) {
      if (played.has(s)) st.satOut[s] = [];
      if (st.tokens[s] === 0) st.satOut[s].push({ manche: st.manche, events: st.events });
    }
  }

  function startManche(st) {
    const n = st.n;
    keepMissed(st);
    st.manche += 1;
    if (st.manche > 1) {
      let d = st.dealer;
      for (let k = 1; k <= n; k++) {
        d = (((st.dealer - k) % n) + n) % n;
        if (st.tokens[d] > 0) break;
      }
      st.dealer = d;
    }
    st.order = [];
    for (let k = 1; k <= n; k++) {
      const s = (((st.dealer - k) % n) + n) % n;
      if (st.tokens[s] > 0) st.order.push(s);
    }
    if (st.reshuffle) {
      st.deck = st.rank.map((_, c) => c);
      st.used = [];
      st.rng.shuffle(st.deck);
    }
    st.revealed = new Array(n).fill(false);
    st.dealt = new Array(n).fill(null);
    st.passed = Array.from({ length: n }, () => []);
    st.received = Array.from({ length: n }, () => []);
    st.prevEvents = st.events;
    st.prevShown = new Array(n).fill(null);
    st.events = [];
    resetChain(st);
    for (const s of st.order) {
      const c = draw(st);
      st.hand[s] = c;
      st.dealt[s] = name(st, c);
    }
    st.pos = 0;
    st.phase = TURN;
  }

  function draw(st) {
    if (!st.deck.length) {
      st.deck = st.used;
      st.used = [];
      st.rng.shuffle(st.deck);
    }
    return st.deck.pop();
  }

  function resetChain(st) {
    st.chainFirst = NONE;
    st.chainStart = new Map();
    st.chainReceiver = NONE;
  }

  function nextInOrder(st, seat) {
    const order = st.order;
    const k = order.length;
    const i = order.indexOf(seat);
    for (let step = 1; step <= k; step++) {
      const s = order[(i + step) % k];
      if (st.tokens[s] > 0) return s;
    }
    return seat;
  }

  function nextTurn(st) {
    const order = st.order;
    const last = order.length - 1;
    st.phase = TURN;
    for (let i = st.pos + 1; i < last; i++) {
      const s = order[i];
      if (st.tokens[s] > 0 && !st.revealed[s]) {
        st.pos = i;
        if (st.chainReceiver !== s) resetChain(st);
        return;
      }
    }
    resetChain(st);
    st.pos = last;
    const d = order[last];
    if (st.tokens[d] > 0 && !st.revealed[d]) {
      st.phase = DEALER;
      return;
    }
    showdown(st);
  }

  function ask(st, asker, target) {
    if (target === asker || st.chainStart.has(target)) {
      event(st, { type: 'void', asker });
      resetChain(st);
      nextTurn(st);
    } else if (st.rank[st.hand[target]] > BLOCKER_MAX) {
      accept(st, asker, target);
    } else if (st.revealed[target]) {
      block(st, asker, target, true);
    } else {
      st.phase = RESPOND;
      st.asker = asker;
      st.target = target;
    }
  }

  function accept(st, asker, target) {
    const hand = st.hand;
    const give = hand[asker];
    const get = hand[target];
    if (!st.chainStart.has(target)) st.chainStart.set(target, get);
    hand[asker] = get;
    hand[target] = give;
    st.chainReceiver = target;
    const g = name(st, give);
    const r = name(st, get);
    st.passed[asker].push(g);
    st.received[asker].push(r);
    st.passed[target].push(r);
    st.received[target].push(g);
    event(st, { type: 'accept', seat: target, asker }, { [asker]: { gave: g, got: r }, [target]: { gave: r, got: g } });
    st.asker = st.target = NONE;
    nextTurn(st);
  }

  function block(st, asker, target, auto) {
    const r = st.rank[st.hand[target]];
    st.revealed[target] = true;
    st.asker = st.target = NONE;
    if (r === SALTA) {
      const next = nextInOrder(st, target);
      event(st, { type: 'skip', seat: target, asker, card: RANKS[r], next, auto });
      ask(st, asker, next);
      return;
    }
    event(st, { type: 'block', seat: target, asker, card: RANKS[r], auto });
    const losers = [];
    if (r === LUPO) {
      losers.push([asker, 'lupo']);
    } else if (r === PUZZOLA) {
      unwind(st);
      losers.push([asker, 'puzzola']);
      if (st.chainFirst !== NONE && st.chainFirst !== asker) losers.push([st.chainFirst, 'puzzola']);
    }
    resetChain(st);
    if (losers.length) {
      loseTokens(st, losers, true);
      if (inGame(st) < 2) {
        endManche(st);
        return;
      }
    }
    nextTurn(st);
  }

  function unwind(st) {
    const members = [...st.chainStart.keys()].filter((m) => st.hand[m] !== st.chainStart.get(m));
    if (!members.length) return;
    const priv = {};
    for (const m of members) {
      const c = st.chainStart.get(m);
      st.hand[m] = c;
      priv[m] = { got: name(st, c) };
    }
    event(st, { type: 'unwind', first: st.chainFirst, members }, priv);
  }

  function loseTokens(st, losers, midManche) {
    const out = [];
    for (const [s, cause] of losers) {
      st.tokens[s] -= 1;
      event(st, { type: 'token', seat: s, cause, tokens: st.tokens[s] });
      if (st.tokens[s] === 0) out.push(s);
    }
    for (const s of out) {
      st.elimManche[s] = st.manche;
      let card = null;
      if (midManche) {
        const c = st.hand[s];
        st.hand[s] = NONE;
        st.used.push(c);
        card = name(st, c);
      }
      event(st, { type: 'eliminated', seat: s, card });
    }
  }

  function dealerDraw(st, dealer) {
    const c = draw(st);
    if (st.rank[c] <= BLOCKER_MAX) {
      st.used.push(c);
      event(st, { type: 'draw', seat: dealer, blocked: true, card: name(st, c) });
      return;
    }
    const old = st.hand[dealer];
    st.hand[dealer] = c;
    st.used.push(old);
    const g = name(st, old);
    const r = name(st, c);
    st.passed[dealer].push(g);
    st.received[dealer].push(r);
    event(st, { type: 'draw', seat: dealer, blocked: false, discarded: g }, { [dealer]: { got: r } });
  }

  function showdown(st) {
    const players = st.order.filter((s) => st.tokens[s] > 0);
    const rankOf = (s) => st.rank[st.hand[s]];
    const cards = new Array(st.n).fill(null);
    for (const s of players) cards[s] = RANKS[rankOf(s)];
    const low = Math.min(...players.map((s) => VALUES[rankOf(s)]));
    const jollys = players.filter((s) => rankOf(s) === JOLLY);
    const safe = jollys.length >= 2 ? jollys : [];
    const losers = players.filter((s) => VALUES[rankOf(s)] === low && !safe.includes(s));
    const nobody = losers.length === players.length && losers.every((s) => st.tokens[s] === 1);
    const lowest = RANKS[rankOf(players.find((s) => VALUES[rankOf(s)] === low))];
    event(st, { type: 'showdown', cards, lowest, losers: nobody ? [] : losers, safe, nobody_loses: nobody });
    if (!nobody) loseTokens(st, losers.map((s) => [s, 'showdown']), false);
    if (safe.length) {
      for (let s = 0; s < st.n; s++) {
        if (st.tokens[s] === 0 && st.elimManche[s] < st.manche) {
          st.tokens[s] = 1;
          event(st, { type: 'reenter', seat: s, tokens: 1 });
        }
      }
    }
    endManche(st);
  }

  function endManche(st) {
    for (let s = 0; s < st.n; s++) {
      if (st.hand[s] !== NONE) {
        st.used.push(st.hand[s]);
        st.hand[s] = NONE;
      }
    }
    st.asker = st.target = NONE;
    if (inGame(st) < 2 || st.manche >= st.maxManches) {
      st.phase = OVER;
      resetChain(st);
      return;
    }
    startManche(st);
  }

  function toAct(st) {
    if (st.phase === RESPOND) return [st.target];
    if (st.phase === OVER) return [];
    return [st.order[st.pos]];
  }

  function legal(st, seat) {
    if (st.phase === RESPOND) return seat === st.target ? ['accept', 'block'] : [];
    if (st.phase === OVER || seat !== st.order[st.pos]) return [];
    return st.phase === TURN ? ['keep', 'swap'] : ['keep', 'draw'];
  }

  function apply(st, seat, action) {
    const refuse = (why) => {
      throw new Error(`${JSON.stringify(action)} is refused by the rules: ${why}`);
    };
    const phase = st.phase;
    if (phase === OVER) refuse('the match is over');
    const actor = toAct(st)[0];
    if (seat !== actor) refuse(`seat ${seat} is not to act; seat ${actor} is`);
    if (!legal(st, seat).includes(action)) refuse(`not one of ${JSON.stringify(legal(st, seat))}`);
    if (phase === RESPOND) {
      if (action === 'accept') accept(st, st.asker, seat);
      else block(st, st.asker, seat, false);
    } else if (phase === TURN) {
      if (action === 'keep') {
        event(st, { type: 'keep', seat });
        nextTurn(st);
        return;
      }
      if (st.chainReceiver !== seat) {
        // a fresh chain starts with this swap
        st.chainFirst = seat;
        st.chainStart = new Map([[seat, st.hand[seat]]]);
      }
      const target = nextInOrder(st, seat);
      event(st, { type: 'ask', seat, target });
      ask(st, seat, target);
    } else {
      if (action === 'keep') event(st, { type: 'keep', seat });
      else dealerDraw(st, seat);
      showdown(st);
    }
  }

  // Every seat's view (rules.py's Dieci.view); the parts every seat shares are made once.
  function views(st) {
    const n = st.n;
    const turn = st.phase === OVER ? null : st.order[st.pos];
    const tokens = st.tokens.slice();
    const out = [];
    for (let s = 0; s < n; s++) if (st.tokens[s] === 0) out.push(s);
    const pile = st.used.map((c) => st.rank[c]).sort((a, b) => a - b).map((r) => RANKS[r]);
    const revealed = st.hand.map((c, s) => (st.revealed[s] && c !== NONE ? RANKS[st.rank[c]] : null));
    const all = [];
    for (let seat = 0; seat < n; seat++) {
      let decision = null;
      let asker = null;
      let target = null;
      if (st.phase === RESPOND) {
        if (st.target === seat) {
          decision = RESPOND;
          asker = st.asker;
        }
      } else if (turn === seat) {
        decision = st.phase;
        if (st.phase === TURN) target = nextInOrder(st, seat);
      }
      if (st.prevShown[seat] === null) st.prevShown[seat] = render(st.prevEvents, seat);
      const card = st.hand[seat];
      const v = {
        seat,
        players: n,
        manche: st.manche,
        max_manches: st.maxManches,
        dealer: st.dealer,
        order: st.order,
        tokens,
        out,
        deck_size: st.deck.length,
        discard_pile: pile,
        card: card === NONE ? null : name(st, card),
        dealt: st.dealt[seat],
        passed: st.passed[seat].slice(),
        received: st.received[seat].slice(),
        revealed,
        turn,
        your_turn: decision !== null,
        decision,
        asker,
        target,
        events: render(st.events, seat),
        previous_events: st.prevShown[seat],
      };
      const missed = st.satOut[seat];
      if (missed.length && st.tokens[seat] !== 0) {
        v.sat_out = missed.map((m) => ({ manche: m.manche, events: render(m.events, seat) }));
      }
      all.push(v);
    }
    return all;
  }

  // frames(game, options, seed, n, moves, after=True) as replay data format 1 (whole views).
  // Dieci takes no extras (Game.apply_extras keeps the state), so doc.extras changes nothing.
  G.rebuild = function (doc, options) {
    const n = doc.bots.length;
    const st = setup(n, doc.seed, options || {});
    const stored = [];
    const store = () =>
      views(st).map((v) => {
        stored.push({ f: v });
        return stored.length - 1;
      });
    const start = store();
    const sent = [];
    const after = [];
    const counts = [];
    let now = start;
    let i = 0;
    while (st.phase !== OVER && i < doc.seat.length) {
      // one seat decides at a time in Dieci: the group of frames.py is always one seat
      const s = toAct(st)[0];
      if (doc.seat[i] !== s) throw new Error(`decision ${i + 1} is seat ${doc.seat[i]}'s, the rules ask seat ${s}`);
      counts.push(legal(st, s).length);
      sent.push(now[s]);
      try {
        apply(st, s, doc.action[i]);
      } catch (e) {
        throw new Error(`decision ${i + 1} (${e.message})`);
      }
      now = store();
      after.push(now);
      i++;
    }
    return { views: stored, start, sent, after, legal: counts };
  };
})();
