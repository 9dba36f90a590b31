#include "comm/hierarchy.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "comm/collectives.hpp"
#include "core/error.hpp"

namespace paraxis::comm {

Hierarchy Hierarchy::fromColors(const Communicator& comm, int color, int localRank) {
  Hierarchy h;
  h.local_ = comm.split(color, comm.rank());
  h.cross_ = comm.split(localRank, comm.rank());
  // Uniform when every host holds the same number of ranks.
  const std::int64_t mine = h.local_.size();
  std::vector<std::int64_t> sizes(comm.size());
  allgather(comm, &mine, sizes.data(), 1, DataType::kI64);
  h.uniform_ = std::all_of(sizes.begin(), sizes.end(), [&](std::int64_t s) { return s == mine; });
  return h;
}

Hierarchy Hierarchy::fromHosts(const Communicator& comm) { return fromNames(comm, comm.hostName()); }

Hierarchy Hierarchy::fromMachines(const Communicator& comm) {
  std::string bootId;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> bootId;
  return fromNames(comm, bootId.empty() ? comm.hostName() : bootId);
}

// Ranks that give the same name (its first 63 characters) form a group.
Hierarchy Hierarchy::fromNames(const Communicator& comm, const std::string& name) {
  constexpr std::size_t kNameBytes = 64;
  std::vector<char> mine(kNameBytes, '\0');
  std::memcpy(mine.data(), name.data(), std::min(name.size(), kNameBytes - 1));
  std::vector<char> all(kNameBytes * comm.size());
  allgather(comm, mine.data(), all.data(), kNameBytes / 8, DataType::kU64);
  // The colour of a host is the first rank on it; the local rank counts earlier ranks there.
  int color = comm.rank();
  int localRank = 0;
  for (int r = 0; r < comm.rank(); ++r) {
    if (std::memcmp(all.data() + r * kNameBytes, mine.data(), kNameBytes) == 0) {
      color = std::min(color, r);
      ++localRank;
    }
  }
  return fromColors(comm, color, localRank);
}

Hierarchy Hierarchy::fromGroups(const Communicator& comm, int ranksPerGroup) {
  if (ranksPerGroup < 1) throw ConfigError("Hierarchy: ranks per group must be at least 1");
  return fromColors(comm, comm.rank() / ranksPerGroup, comm.rank() % ranksPerGroup);
}

}  // namespace paraxis::comm
