#include "core/compute_device.hpp"

#include <fmt/format.h>

#include <charconv>

#include "core/error.hpp"

namespace paraxis {

std::string ComputeDevice::str() const { return cuda() ? fmt::format("cuda:{}", index) : "cpu"; }

ComputeDevice parseComputeDevice(std::string_view text, std::string_view what) {
  if (text == "cpu") return {};
  if (text == "cuda") return {.kind = ComputeDevice::Kind::kCuda};
  constexpr std::string_view prefix = "cuda:";
  if (text.starts_with(prefix)) {
    const std::string_view digits = text.substr(prefix.size());
    int index = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error == std::errc() && end == digits.data() + digits.size() && !digits.empty() && index >= 0 && index < 64) {
      return {.kind = ComputeDevice::Kind::kCuda, .index = index};
    }
  }
  throw ConfigError(fmt::format("{}: '{}': expected cpu, cuda or cuda:N (N from 0 to 63)", what, text));
}

}  // namespace paraxis
