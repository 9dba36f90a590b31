#include "comm/operation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <thread>

#include "comm/comm_state.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace paraxis::comm {
namespace {

constexpr int kCollectiveTagBase = 16;
constexpr int kPointToPointTagBase = 1 << 27;
constexpr int kPollEvery = 64;

constexpr std::array<const char*, 8> kAlgorithmNames{
    "", "ring", "recursive_doubling", "rabenseifner", "hierarchical", "mpi", "binomial_tree", "pairwise"};

double deadlineOf(const CallInfo& info, const CommunicatorOptions& options) {
  return info.deadlineSeconds > 0 ? info.deadlineSeconds : options.deadlineSeconds;
}

}  // namespace

std::string operationName(Operation op) {
  switch (op) {
    case Operation::kAllreduce: return "allreduce";
    case Operation::kAllgather: return "allgather";
    case Operation::kReduceScatter: return "reduce_scatter";
    case Operation::kBroadcast: return "broadcast";
    case Operation::kAlltoallv: return "alltoallv";
    case Operation::kHaloExchange: return "halo_exchange";
    case Operation::kBarrier: return "barrier";
    case Operation::kSend: return "send";
    case Operation::kRecv: return "recv";
  }
  return "?";
}

bool isCollective(Operation op) { return op != Operation::kSend && op != Operation::kRecv; }

OpContext::OpContext(detail::CommState& state, const CallInfo& info, std::uint64_t sequence)
    : state_(state), info_(info), sequence_(sequence) {
  const auto seconds = std::chrono::duration<double>(deadlineOf(info, state.options()));
  deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(seconds);
}

int OpContext::rank() const { return state_.transport().rank(); }
int OpContext::size() const { return state_.transport().size(); }
Transport& OpContext::transport() const { return state_.transport(); }

int OpContext::tag() const {
  if (!isCollective(info_.op)) return kPointToPointTagBase + info_.tag;
  return kCollectiveTagBase + static_cast<int>(sequence_ % (1U << 26));
}

Request OpContext::send(const void* data, std::size_t bytes, int peer) {
  const auto start = Clock::now();
  Request r = transport().isend(data, bytes, peer, tag());
  if (timed_) transportSeconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

Request OpContext::recv(void* data, std::size_t bytes, int peer) {
  return transport().irecv(data, bytes, peer, tag());
}

bool OpContext::test(Request& request) {
  if (!timed_) return transport().test(request);
  const auto start = Clock::now();
  const bool done = transport().test(request);
  transportSeconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  return done;
}

void OpContext::sendRecv(const void* sendData, std::size_t sendBytes, int sendPeer, void* recvData,
                         std::size_t recvBytes, int recvPeer) {
  Request requests[2] = {recv(recvData, recvBytes, recvPeer), send(sendData, sendBytes, sendPeer)};
  wait(requests);
}

std::byte* OpContext::scratch(ScratchSlot slot, std::size_t bytes) {
  return state_.scratch(static_cast<int>(slot), bytes);
}

void OpContext::wait(std::span<Request> requests) {
  Transport& t = transport();
  const bool collective = isCollective(info_.op);
  const auto started = Clock::now();
  for (long spin = 1;; ++spin) {
    bool all = true;
    for (Request& r : requests) all = test(r) && all;
    if (all) return;
    if (spin % (info_.background ? 4 : kPollEvery) != 0) continue;
    if (collective) {
      while (auto notice = t.pollNotice()) {
        if (notice->sequence == sequence_) timeout(requests, notice->rank);
      }
    }
    const auto now = Clock::now();
    if (now > deadline_) timeout(requests, -1);
    // Every call offers its core at each check (a yield costs nothing on an idle core: an
    // 8-byte allreduce took 0.4 us either way). A blocking call shares its core with the rank's
    // communication threads: spinning its first 200 us held the core from the gradient
    // engine's call in flight, which at backward's end ran on 250-420 us past both ranks'
    // backward where it takes 80 us alone; yielding from the start halved the next forward's
    // wait for its gradients at h=2 (2 ranks here: lenet 0.70 to 0.39 ms, small-cnn@32 0.46
    // to 0.19, resnet18@64 2.08 to 0.81 and its step 81.2 to 76.7 ms; medians of 6 alternated
    // runs). Past 2 ms it sleeps between checks (ranks may outnumber cores). A background call
    // shares the cores with the caller's compute (the backward pass it overlaps), so it soon
    // sleeps between polls.
    const auto waited = now - started;
    std::this_thread::yield();
    if (info_.background) {
      if (waited > std::chrono::microseconds(50)) std::this_thread::sleep_for(std::chrono::microseconds(20));
    } else if (waited > std::chrono::milliseconds(2)) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

void OpContext::timeout(std::span<Request> pending, int notifier) {
  const bool notified = notifier >= 0;
  Transport& t = transport();
  for (Request& r : pending) t.abandon(r);
  const double seconds = deadlineOf(info_, state_.options());
  const std::string what = fmt::format("{} #{} ({})", operationName(info_.op), sequence_,
                                       units::formatBytes(static_cast<double>(info_.bytes)));
  if (!isCollective(info_.op)) {
    throw TimeoutError(fmt::format("{} {} rank {} (tag {}): no progress within the {} deadline (rank {} of {})",
                                   what, info_.op == Operation::kSend ? "to" : "from", info_.root, info_.tag,
                                   units::formatSeconds(seconds), rank(), size()));
  }
  // Tell every peer this call failed, then listen for a grace period: the ranks that answer
  // are stuck in the same call; those that stay silent never joined it.
  const Notice mine{sequence_, rank(), 0};
  for (int peer = 0; peer < size(); ++peer) {
    if (peer != rank()) t.sendNotice(mine, peer);
  }
  std::set<int> present{rank()};
  if (notified) present.insert(notifier);
  const auto graceEnd = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::min(0.5 * seconds, 5.0)));
  while (static_cast<int>(present.size()) < size() && Clock::now() < graceEnd) {
    if (auto notice = t.pollNotice()) {
      if (notice->sequence == sequence_) present.insert(notice->rank);
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  std::vector<int> absent;
  for (int r = 0; r < size(); ++r) {
    if (present.count(r) == 0) absent.push_back(r);
  }
  const std::string who = absent.empty()
                              ? "every rank joined; the transport stalled"
                              : fmt::format("rank{} {} did not take part", absent.size() > 1 ? "s" : "",
                                            fmt::join(absent, ","));
  throw TimeoutError(fmt::format("{}: no progress within the {} deadline{}; {} (seen on rank {} of {})", what,
                                 units::formatSeconds(seconds), notified ? " (a peer gave up first)" : "", who,
                                 rank(), size()));
}

std::int32_t algorithmCode(const char* name) {
  const std::string_view wanted(name);
  for (std::size_t i = 0; i < kAlgorithmNames.size(); ++i) {
    if (wanted == kAlgorithmNames[i]) return static_cast<std::int32_t>(i);
  }
  throw InternalError(fmt::format("unknown collective algorithm '{}'", wanted));
}

const char* algorithmCodeName(std::int32_t code) {
  return code >= 0 && code < static_cast<std::int32_t>(kAlgorithmNames.size()) ? kAlgorithmNames[code] : "?";
}

}  // namespace paraxis::comm
