#pragma once
// Units: all quantities are plain doubles in SI base units (bytes, seconds, FLOPs, bytes/s,
// FLOP/s). These helpers print them for people and parse them from files, where a value
// may carry a unit ("16 GiB", "12.5 GB/s", "500 ns", "7.8 TFLOP/s") or be a bare number.
#include <optional>
#include <string>
#include <string_view>

namespace paraxis::units {

enum class Quantity { kBytes, kSeconds, kBytesPerSecond, kFlopsPerSecond, kCount };

// Human-readable forms with three significant digits: "97.7 MiB", "16.1 ms", "4.09 GFLOP".
std::string formatBytes(double bytes);
std::string formatSeconds(double seconds);
std::string formatFlops(double flops);
std::string formatRate(double bytesPerSecond);
std::string formatFlopRate(double flopsPerSecond);
std::string formatCount(double count);  // 25,557,032 (exact integer with separators)

// Parses "<number> [unit]" for the given quantity; a bare number is taken in base units.
// Returns nullopt when the text is not a number or the unit does not belong to the quantity.
std::optional<double> parse(std::string_view text, Quantity quantity);

// The units parse() accepts for a quantity, for error messages ("B, KB, KiB, ...").
std::string acceptedUnits(Quantity quantity);

}  // namespace paraxis::units
