#include "comm/self/self_transport.hpp"

#include <cstring>

#include "core/error.hpp"

namespace paraxis::comm::self {
namespace {

class SelfTransport final : public Transport {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string hostName() const override { return "localhost"; }
  bool threadSafe() const override { return true; }
  std::unique_ptr<Transport> split(int, int) override { return std::make_unique<SelfTransport>(); }

  Request isend(const void*, std::size_t, int peer, int) override { return noPeer(peer); }
  Request irecv(void*, std::size_t, int peer, int) override { return noPeer(peer); }
  bool test(Request&) override { return true; }
  void abandon(Request&) override {}
  void sendNotice(const Notice&, int) override {}
  std::optional<Notice> pollNotice() override { return std::nullopt; }

  Request iallgatherFingerprints(const Fingerprint& mine, std::vector<Fingerprint>& all) override {
    all.assign(1, mine);
    return {};
  }

  Request ibuiltin(const BuiltinCall& c) override {
    const std::size_t size = elementSize(c.type);
    switch (c.kind) {
      case BuiltinCall::Kind::kAllreduce:
        if (c.send != c.recv) std::memcpy(c.recv, c.send, c.count * size);
        break;
      case BuiltinCall::Kind::kAllgatherv:
      case BuiltinCall::Kind::kReduceScatterv:
        std::memmove(c.recv, c.send, static_cast<std::size_t>(c.recvCounts.at(0)) * size);
        break;
      case BuiltinCall::Kind::kBroadcast: break;
      case BuiltinCall::Kind::kAlltoallv:
        std::memmove(static_cast<std::byte*>(c.recv) + c.recvDispls.at(0) * size,
                     static_cast<const std::byte*>(c.send) + c.sendDispls.at(0) * size,
                     static_cast<std::size_t>(c.sendCounts.at(0)) * size);
        break;
    }
    return {};
  }

 private:
  static Request noPeer(int peer) {
    throw CommError("a one-rank communicator has no peer rank " + std::to_string(peer));
  }
};

}  // namespace

std::unique_ptr<Transport> makeSelfTransport() { return std::make_unique<SelfTransport>(); }

}  // namespace paraxis::comm::self
