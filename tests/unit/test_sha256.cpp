// SHA-256 (core/sha256.hpp) against the FIPS 180-4 examples, fed whole and in uneven pieces (the
// block boundary is where a streamed hash breaks).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/sha256.hpp"

using sharp::Sha256;

namespace {
std::string digest(const std::string& text, std::size_t piece) {
  Sha256 sha;
  for (std::size_t i = 0; i < text.size(); i += piece) sha.bytes(text.data() + i, std::min(piece, text.size() - i));
  return sha.hex();
}
}  // namespace

TEST(Sha256, MatchesTheStandardExamples) {
  EXPECT_EQ(digest("", 1), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest("abc", 1), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (std::size_t piece : {1, 7, 56, 64, 100})
    EXPECT_EQ(digest(two_blocks, piece), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  for (std::size_t piece : {1000, 4096, 1000000})
    EXPECT_EQ(digest(std::string(1000000, 'a'), piece), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, OneChangedByteChangesTheDigest) {
  EXPECT_NE(digest("abd", 1), digest("abc", 1));
}
