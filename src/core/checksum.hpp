#pragma once
// A 64-bit checksum of bytes (FNV-1a over 8-byte words, then the tail bytes): fast enough to
// cover every checkpoint, and a fingerprint of configuration text. Not cryptographic.
#include <cstdint>
#include <string>
#include <string_view>

namespace paraxis {

std::uint64_t checksum64(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);
// Sixteen lower-case hex digits.
std::string checksumHex(std::uint64_t value);

}  // namespace paraxis
