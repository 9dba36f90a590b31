#include "reduce/engine_core.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "comm/agreement.hpp"
#include "comm/allreduce.hpp"
#include "comm/hierarchy.hpp"
#include "core/error.hpp"

namespace paraxis::reduce {

namespace {

comm::AllreduceAlgorithm runtimeAlgorithm(GradientAlgorithm a) {
  switch (a) {
    case GradientAlgorithm::kRing: return comm::AllreduceAlgorithm::kRing;
    case GradientAlgorithm::kRecursiveDoubling: return comm::AllreduceAlgorithm::kRecursiveDoubling;
    case GradientAlgorithm::kRabenseifner: return comm::AllreduceAlgorithm::kRabenseifner;
    case GradientAlgorithm::kHierarchical: return comm::AllreduceAlgorithm::kHierarchical;
    case GradientAlgorithm::kAuto: break;
  }
  return comm::AllreduceAlgorithm::kAuto;
}

// The hosts of the engine's ranks, for the hierarchical algorithm (collective).
std::unique_ptr<comm::Hierarchy> hostsFor(const comm::Communicator& reduce, GradientAlgorithm a) {
  if (a != GradientAlgorithm::kHierarchical) return nullptr;
  auto hosts = std::make_unique<comm::Hierarchy>(comm::Hierarchy::fromHosts(reduce));
  if (!hosts->uniform()) {
    throw ConfigError(fmt::format("--allreduce hierarchical: needs the same number of ranks on every host; these {} "
                                  "ranks are on {} hosts unevenly",
                                  reduce.size(), hosts->groups()));
  }
  return hosts;
}

}  // namespace

EngineCore::EngineCore(const comm::Communicator& comm, GradientComm settings)
    : settings_(settings),
      reduce_(comm.duplicate()),
      negotiation_(comm.duplicate()),
      hosts_(hostsFor(reduce_, settings.algorithm)) {}

EngineCore::~EngineCore() = default;

comm::AllreduceOptions EngineCore::denseOptions() const {
  comm::AllreduceOptions o;
  o.algorithm = runtimeAlgorithm(settings_.algorithm);
  o.hierarchy = hosts_.get();
  o.prescale = 1.0F / static_cast<float>(reduce_.size());
  if (settings_.wire == WireFormat::kF16) o.wire = comm::DataType::kF16;
  if (settings_.wire == WireFormat::kBF16) o.wire = comm::DataType::kBF16;
  return o;
}

bool EngineCore::reductionMovesData() const {
  return reduce_.size() > 1 || settings_.wire == WireFormat::kF16 || settings_.wire == WireFormat::kBF16;
}

comm::Work EngineCore::reduceDense(int group, std::int64_t offset, std::int64_t count) {
  if (!reductionMovesData()) return {};
  const GradientGroup& g = groups[group];
  comm::AllreduceOptions options = denseOptions();
  if (g.stage) {
    options.beforeRead = [stage = g.stage, offset, count] { stage(offset, count, true); };
    options.afterWrite = [stage = g.stage, offset, count] { stage(offset, count, false); };
  }
  float* data = g.data + offset;
  return comm::iallreduce(reduce_, data, data, static_cast<std::size_t>(count), comm::DataType::kF32, options);
}

std::string EngineCore::largestGroupAlgorithm() const {
  std::int64_t largest = 0;
  for (const GradientGroup& g : groups) largest = std::max(largest, g.elements);
  if (reduce_.size() == 1 || largest == 0) return "none";
  const auto bytes = static_cast<std::size_t>(largest) * sizeof(float);
  return comm::algorithmName(comm::chooseAllreduce(reduce_, bytes, denseOptions()));
}

// Through the progress thread (an i-call), whose polling yields to the backward pass it
// overlaps; no coordinator: every rank learns the same set.
std::vector<std::uint8_t> EngineCore::agreeReady(const std::vector<std::uint8_t>& readyHere) {
  return comm::agreeOnFlags(negotiation_, readyHere);
}

void EngineCore::resetStep() {
  for (GradientGroup& g : groups) {
    g.pending = static_cast<int>(g.members.size());
    g.work = comm::Work();
  }
  complete.assign(groups.size(), 0);
  reduced.assign(groups.size(), 0);
  backwardDone = false;
  failure = nullptr;
}

void EngineCore::fail(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex);
    if (failure == nullptr) failure = std::move(error);
  }
  changed.notify_all();
}

void EngineCore::rethrowFailure() const {
  if (failure != nullptr) std::rethrow_exception(failure);
}

}  // namespace paraxis::reduce
