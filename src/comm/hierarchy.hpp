#pragma once
// How the ranks of a communicator group into hosts, for two-level algorithms: a
// communicator inside each host ("local") and one across hosts joining the ranks with the
// same local index ("cross"). Built once (it splits communicators), used by many calls.
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace paraxis::comm {

class Hierarchy {
 public:
  // Groups ranks by the host they run on (the transport's host name).
  static Hierarchy fromHosts(const Communicator& comm);
  // Groups ranks by the machine they run on (its kernel's boot id; the host name where there
  // is none): network-namespace hosts, named apart, share one machine's cores.
  static Hierarchy fromMachines(const Communicator& comm);
  // Groups consecutive ranks, `ranksPerGroup` at a time (an explicit grouping).
  static Hierarchy fromGroups(const Communicator& comm, int ranksPerGroup);

  const Communicator& local() const { return local_; }
  const Communicator& cross() const { return cross_; }
  int localSize() const { return local_.size(); }
  int groups() const { return cross_.size(); }
  // True when every group has the same number of ranks (required by the algorithm).
  bool uniform() const { return uniform_; }

 private:
  static Hierarchy fromColors(const Communicator& comm, int color, int localRank);
  static Hierarchy fromNames(const Communicator& comm, const std::string& name);
  Communicator local_;
  Communicator cross_;
  bool uniform_ = true;
};

}  // namespace paraxis::comm
