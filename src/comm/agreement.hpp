#pragma once
// Ranks that must act alike decide together: a rank-local failure (a file it cannot read or
// write, an option it holds differently) becomes the same decision on every rank, so that no
// rank waits in a collective for a peer that has already given up.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace paraxis::comm {

struct RankMessage {
  int rank = 0;
  std::string text;
};

// Collective. `mine` is empty where this rank is fine. Returns, on every rank, the lowest
// rank's non-empty message (cut to 1000 bytes), or none when every rank is fine.
std::optional<RankMessage> firstFailure(const Communicator& comm, const std::string& mine);

// "rank R: text", or the text alone on a one-rank communicator.
std::string describe(const Communicator& comm, const RankMessage& message);

// Collective. Per flag, whether every rank holds it: a bitwise AND of bit vectors by recursive
// doubling (the gradient engine's readiness agreement; the calibration's overlap bench times
// the same call beside compute).
std::vector<std::uint8_t> agreeOnFlags(const Communicator& comm, const std::vector<std::uint8_t>& mine);

// Collective. The text rank `root` holds, on every rank (cut to 64 KiB).
std::string broadcastText(const Communicator& comm, const std::string& text, int root);

}  // namespace paraxis::comm
