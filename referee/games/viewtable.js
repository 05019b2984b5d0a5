// The view table of replay data format 1 for the replay engines (referee/games/<id>/replay.js),
// as referee/store/replay_data.py's _Views and _delta make it: ViewTable(n) gives
// {views, ref(seat, view)}; ref returns the index of `view`, a seat's unchanged view keeping
// its index, a changed one stored as the difference (keys set, lists appended to, keys
// deleted) from the latest view stored of any seat. Views are JSON values without floats, so
// Python's == is strict equality here. The viewer inlines this file before the game's
// replay.js in its own scope: it defines `ViewTable` and nothing else.
const ViewTable = (function () {
  'use strict';
  const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

  // Python's == on JSON values
  function same(a, b) {
    if (a === b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    const list = Array.isArray(a);
    if (list !== Array.isArray(b)) return false;
    if (list) return a.length === b.length && samePrefix(a, b, a.length);
    let keys = 0;
    for (const k in a) {
      if (!has(b, k)) return false;
      const x = a[k];
      const y = b[k];
      if (x !== y && (typeof x !== 'object' || !same(x, y))) return false;
      keys++;
    }
    for (const k in b) keys--;
    return keys === 0;
  }

  // the first `n` items of lists `a` and `b` are equal
  function samePrefix(a, b, n) {
    for (let i = 0; i < n; i++) {
      const x = a[i];
      const y = b[i];
      if (x !== y && (typeof x !== 'object' || !same(x, y))) return false;
    }
    return true;
  }

  // replay_data._delta: view `v` as keys set, lists appended to and keys deleted from `base`
  function delta(baseIndex, base, v) {
    const put = {};
    const app = {};
    let puts = 0;
    let apps = 0;
    for (const k of Object.keys(v)) {
      const old = base[k];
      const now = v[k];
      if (has(base, k) && same(old, now)) continue;
      if (Array.isArray(now) && Array.isArray(old) && old.length > 0 && old.length < now.length &&
          samePrefix(now, old, old.length)) {
        app[k] = now.slice(old.length);
        apps++;
      } else {
        put[k] = now;
        puts++;
      }
    }
    const out = { b: baseIndex };
    if (puts) out.set = put;
    if (apps) out.app = app;
    const gone = Object.keys(base).filter((k) => !has(v, k));
    if (gone.length) out.del = gone;
    return out;
  }

  return function table(n) {
    const views = [];
    const last = new Array(n).fill(null);
    let latest = null;
    function ref(seat, v) {
      const prev = last[seat];
      if (prev !== null && same(prev[1], v)) return prev[0];
      views.push(latest === null ? { f: v } : delta(latest[0], latest[1], v));
      latest = last[seat] = [views.length - 1, v];
      return views.length - 1;
    }
    return { views, ref };
  };
})();
