#include "core/checksum.hpp"

#include <fmt/format.h>

#include <cstring>

namespace paraxis {

std::uint64_t checksum64(std::string_view bytes, std::uint64_t seed) {
  constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t h = seed;
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + i, 8);
    h = (h ^ word) * kPrime;
    h ^= h >> 29;  // words differ in their high bytes too: fold them down before the next multiply
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * kPrime;
  return h ^ (h >> 32) ^ bytes.size();
}

std::string checksumHex(std::uint64_t value) { return fmt::format("{:016x}", value); }

}  // namespace paraxis
