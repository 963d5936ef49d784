#pragma once
// One step of xoshiro256** (Blackman and Vigna) on a state of four words:
// one generator with 64-bit words (RandomStream), or several side by side
// with vectors of them (NormalStream's lanes). The multiplications by 5
// and 9 are written as shifts and additions, which vectors of 64-bit words
// have on AVX2 too.
namespace mft::xoshiro {

template <class Word> [[gnu::always_inline]] inline Word rotl(Word x, int k) { return (x << k) | (x >> (64 - k)); }

// The next output; the state moves on.
template <class Word> [[gnu::always_inline]] inline Word next(Word s[4]) {
  const Word r = s[1] + (s[1] << 2); // s1 * 5
  const Word x = rotl(r, 7);
  const Word result = x + (x << 3); // * 9
  const Word t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

} // namespace mft::xoshiro
