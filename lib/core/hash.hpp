#pragma once
// Stable 64-bit hashing for point ids, config fingerprints and random-stream keys. The values are
// part of the file format (point ids name files), so they must never change between versions.
#include <cstdint>
#include <string>
#include <string_view>

namespace sharp {

// SplitMix64 finaliser: a bijective mix of 64 bits (Steele, Lea, Flood 2014).
constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// FNV-1a over the bytes, then mix64 so that nearby strings land far apart.
constexpr std::uint64_t hash64(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix64(h);
}

// Combine two hashes in order (hash_combine(a, b) != hash_combine(b, a)). Bijective in b for a
// fixed a; both are mixed before they meet, so small inputs (key 3, label 7) collide no more often
// than random 64-bit values.
constexpr std::uint64_t hash_combine(std::uint64_t a, std::uint64_t b) {
  return mix64(mix64(a ^ 0x6a09e667f3bcc909ULL) + mix64(b + 0xbb67ae8584caa73bULL));
}

// 16 lower-case hex digits.
inline std::string hex64(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = digits[v & 15];
  return s;
}

}  // namespace sharp
