// CPython's random.Random for the replay engines (referee/games/<id>/replay.js): one copy of
// what they draw, draw for draw as Modules/_randommodule.c and Lib/random.py make it.
// PyRandom.seeded(seed) is random.Random(seed) for an int seed (a BigInt, a number or its
// decimal text): MT19937 init_by_array over the 32-bit little-endian words of abs(seed), one
// word 0 for seed 0. The generator offers getrandbits(k) (1 <= k <= 32), randbelow(n)
// (1 <= n < 2**32), random() and shuffle(x) (Random.shuffle, i.e. referee.games.base.shuffle).
// The viewer inlines this file before the game's replay.js in its own scope: it defines
// `PyRandom` and nothing else.
const PyRandom = (function () {
  'use strict';
  const N = 624;
  const M = 397;

  function keyOf(seed) {
    let s = BigInt(typeof seed === 'string' ? seed.trim() : seed);
    if (s < 0n) s = -s; // random.seed(int) seeds from abs(int)
    const key = [];
    do {
      key.push(Number(s & 0xffffffffn));
      s >>= 32n;
    } while (s > 0n);
    return key;
  }

  // init_genrand(19650218) then init_by_array(key); a Uint32Array keeps each word mod 2**32
  function stateOf(key) {
    const mt = new Uint32Array(N);
    mt[0] = 19650218;
    for (let i = 1; i < N; i++) mt[i] = Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i;
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      mt[i] = (mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) + key[j] + j;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      mt[i] = (mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) - i;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    return mt;
  }

  function twist(mt) {
    let kk = 0;
    let y;
    for (; kk < N - M; kk++) {
      y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7fffffff);
      mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    for (; kk < N - 1; kk++) {
      y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7fffffff);
      mt[kk] = mt[kk + M - N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    y = (mt[N - 1] & 0x80000000) | (mt[0] & 0x7fffffff);
    mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
  }

  function seeded(seed) {
    const mt = stateOf(keyOf(seed));
    let mti = N;

    // genrand_uint32: the next tempered word
    function next() {
      if (mti >= N) {
        twist(mt);
        mti = 0;
      }
      let y = mt[mti++];
      y ^= y >>> 11;
      y ^= (y << 7) & 0x9d2c5680;
      y ^= (y << 15) & 0xefc60000;
      y ^= y >>> 18;
      return y >>> 0;
    }

    function getrandbits(k) {
      if (!Number.isInteger(k) || k < 1 || k > 32) throw new RangeError(`getrandbits(${k}): only 1 to 32 bits`);
      return next() >>> (32 - k);
    }

    // Random._randbelow_with_getrandbits: n.bit_length() bits, drawn again while >= n
    function randbelow(n) {
      if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw new RangeError(`randbelow(${n}): only 1 to 2**32 - 1`);
      const k = 32 - Math.clz32(n);
      let r = getrandbits(k);
      while (r >= n) r = getrandbits(k);
      return r;
    }

    return {
      getrandbits,
      randbelow,
      // random_random: 53 bits from two words, a / 2**26 + b over 2**53
      random() {
        const a = next() >>> 5;
        const b = next() >>> 6;
        return (a * 67108864 + b) / 9007199254740992;
      },
      // Random.shuffle: from the end, swap x[i] with x[randbelow(i + 1)]
      shuffle(x) {
        for (let i = x.length - 1; i > 0; i--) {
          const j = randbelow(i + 1);
          const t = x[i];
          x[i] = x[j];
          x[j] = t;
        }
      },
    };
  }

  return { seeded };
})();
