// Transport over one MPI communicator. Data travels on `comm_`; notices and fingerprints
// on `control_`, a duplicate, so that they never match a data receive.
#include <fmt/format.h>

#include <cstring>

#include "comm/mpi/mpi_runtime.hpp"
#include "core/error.hpp"

namespace paraxis::comm::mpi {
namespace {

constexpr int kNoticeTag = 1;
static_assert(sizeof(MPI_Request) <= sizeof(std::uintptr_t), "MPI_Request must fit a Request handle");

MPI_Request toMpi(const Request& r) {
  MPI_Request m;
  std::memcpy(&m, &r.handle, sizeof(m));
  return m;
}

Request fromMpi(MPI_Request m, int peer) {
  Request r;
  std::memcpy(&r.handle, &m, sizeof(m));
  r.peer = peer;
  return r;
}

MPI_Datatype mpiType(DataType type) {
  switch (type) {
    case DataType::kF32: return MPI_FLOAT;
    case DataType::kF64: return MPI_DOUBLE;
    case DataType::kF16:
    case DataType::kBF16: return MPI_UINT16_T;  // data movement only: MPI cannot reduce them
    case DataType::kI32: return MPI_INT32_T;
    case DataType::kI64: return MPI_INT64_T;
    case DataType::kU64: return MPI_UINT64_T;
  }
  return MPI_BYTE;
}

MPI_Op mpiOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kBitAnd: return MPI_BAND;
    case ReduceOp::kBitOr: return MPI_BOR;
  }
  return MPI_OP_NULL;
}

int asInt(std::size_t bytes, const char* what) {
  if (bytes > static_cast<std::size_t>(INT32_MAX)) {
    throw CommError(fmt::format("{}: message of {} bytes exceeds MPI's int count", what, bytes));
  }
  return static_cast<int>(bytes);
}

// A point-to-point message as MPI counts it. Counts are ints: a message over 2 GiB (a batch of
// 64^3 volumes' activations between pipeline stages) goes as one element of a type of whole
// 1 GiB blocks and the rest, as BigMPI does; the type is freed once the call is posted (MPI
// keeps it for the pending operation).
class MessageType {
 public:
  explicit MessageType(std::size_t bytes) {
    if (bytes <= static_cast<std::size_t>(INT32_MAX)) {
      count_ = static_cast<int>(bytes);
      return;
    }
    constexpr std::size_t kBlock = std::size_t{1} << 30;
    MPI_Datatype block = MPI_DATATYPE_NULL, blocks = MPI_DATATYPE_NULL;
    checkMpi(MPI_Type_contiguous(static_cast<int>(kBlock), MPI_BYTE, &block), "MPI_Type_contiguous");
    checkMpi(MPI_Type_contiguous(static_cast<int>(bytes / kBlock), block, &blocks), "MPI_Type_contiguous");
    MPI_Type_free(&block);
    if (bytes % kBlock == 0) {
      type_ = blocks;
    } else {
      int lengths[2] = {1, static_cast<int>(bytes % kBlock)};
      MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>(bytes / kBlock * kBlock)};
      MPI_Datatype types[2] = {blocks, MPI_BYTE};
      const int made = MPI_Type_create_struct(2, lengths, displacements, types, &type_);
      MPI_Type_free(&blocks);
      checkMpi(made, "MPI_Type_create_struct");
    }
    owned_ = true;
    checkMpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  ~MessageType() {
    if (owned_) MPI_Type_free(&type_);
  }
  MessageType(const MessageType&) = delete;
  MessageType& operator=(const MessageType&) = delete;
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  int count_ = 1;
  MPI_Datatype type_ = MPI_BYTE;
  bool owned_ = false;
};

class MpiTransport final : public Transport {
 public:
  MpiTransport(std::shared_ptr<MpiRuntime> runtime, MPI_Comm comm) : runtime_(std::move(runtime)), comm_(comm) {
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    checkMpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    checkMpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    runtime_->blocking("MPI_Comm_dup", [&] { return MPI_Comm_dup(comm_, &control_); });
    MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN);
    postNoticeReceive();
  }

  ~MpiTransport() override {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised != 0) return;
    if (noticeRequest_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&noticeRequest_);
      MPI_Request_free(&noticeRequest_);
    }
    MPI_Comm_free(&control_);
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool threadSafe() const override { return runtime_->threadMultiple(); }

  std::string hostName() const override {
    char name[MPI_MAX_PROCESSOR_NAME];
    int length = 0;
    checkMpi(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
    return std::string(name, length);
  }

  std::unique_ptr<Transport> split(int color, int key) override {
    MPI_Comm sub = MPI_COMM_NULL;
    runtime_->blocking("MPI_Comm_split", [&] { return MPI_Comm_split(comm_, color, key, &sub); });
    return std::make_unique<MpiTransport>(runtime_, sub);
  }

  Request isend(const void* data, std::size_t bytes, int peer, int tag) override {
    MPI_Request r = MPI_REQUEST_NULL;
    const MessageType message(bytes);
    checkMpi(MPI_Isend(data, message.count(), message.type(), peer, tag, comm_, &r), "MPI_Isend");
    return fromMpi(r, peer);
  }

  Request irecv(void* data, std::size_t bytes, int peer, int tag) override {
    MPI_Request r = MPI_REQUEST_NULL;
    const MessageType message(bytes);
    checkMpi(MPI_Irecv(data, message.count(), message.type(), peer, tag, comm_, &r), "MPI_Irecv");
    return fromMpi(r, peer);
  }

  bool test(Request& request) override {
    MPI_Request r = toMpi(request);
    int done = 0;
    checkMpi(MPI_Test(&r, &done, MPI_STATUS_IGNORE), "MPI_Test");
    request = fromMpi(r, request.peer);
    return done != 0;
  }

  void abandon(Request& request) override {
    MPI_Request r = toMpi(request);
    if (r == MPI_REQUEST_NULL) return;
    // A collective request cannot be cancelled; freeing it lets MPI finish it on its own.
    if (request.peer >= 0) MPI_Cancel(&r);
    MPI_Request_free(&r);
    request = fromMpi(MPI_REQUEST_NULL, request.peer);
  }

  void sendNotice(const Notice& notice, int peer) override {
    MPI_Request r = MPI_REQUEST_NULL;
    // Small enough to go eagerly: freeing the request lets MPI complete it in the background.
    checkMpi(MPI_Isend(&notice, sizeof(Notice), MPI_BYTE, peer, kNoticeTag, control_, &r), "MPI_Isend(notice)");
    MPI_Request_free(&r);
  }

  std::optional<Notice> pollNotice() override {
    int done = 0;
    checkMpi(MPI_Test(&noticeRequest_, &done, MPI_STATUS_IGNORE), "MPI_Test(notice)");
    if (done == 0) return std::nullopt;
    const Notice received = noticeBuffer_;
    postNoticeReceive();
    return received;
  }

  Request iallgatherFingerprints(const Fingerprint& mine, std::vector<Fingerprint>& all) override {
    all.assign(size_, Fingerprint{});
    fingerprint_ = mine;
    MPI_Request r = MPI_REQUEST_NULL;
    checkMpi(MPI_Iallgather(&fingerprint_, sizeof(Fingerprint), MPI_BYTE, all.data(), sizeof(Fingerprint),
                            MPI_BYTE, control_, &r),
             "MPI_Iallgather(fingerprint)");
    return fromMpi(r, -1);
  }

  Request ibuiltin(const BuiltinCall& c) override {
    MPI_Request r = MPI_REQUEST_NULL;
    const MPI_Datatype t = mpiType(c.type);
    const bool half = c.type == DataType::kF16 || c.type == DataType::kBF16;
    const bool reduces = c.kind == BuiltinCall::Kind::kAllreduce || c.kind == BuiltinCall::Kind::kReduceScatterv;
    if (half && reduces) throw ConfigError("MPI's built-in collectives cannot reduce f16/bf16 data");
    const void* send = c.send == c.recv ? MPI_IN_PLACE : c.send;
    switch (c.kind) {
      case BuiltinCall::Kind::kAllreduce:
        checkMpi(MPI_Iallreduce(send, c.recv, asInt(c.count, "allreduce"), t, mpiOp(c.op), comm_, &r), "MPI_Iallreduce");
        break;
      case BuiltinCall::Kind::kAllgatherv:
        checkMpi(MPI_Iallgatherv(send, c.sendCounts.at(0), t, c.recv, c.recvCounts.data(), c.recvDispls.data(), t,
                                 comm_, &r),
                 "MPI_Iallgatherv");
        break;
      case BuiltinCall::Kind::kReduceScatterv:
        checkMpi(MPI_Ireduce_scatter(send, c.recv, c.recvCounts.data(), t, mpiOp(c.op), comm_, &r),
                 "MPI_Ireduce_scatter");
        break;
      case BuiltinCall::Kind::kBroadcast:
        checkMpi(MPI_Ibcast(c.recv, asInt(c.count, "broadcast"), t, c.root, comm_, &r), "MPI_Ibcast");
        break;
      case BuiltinCall::Kind::kAlltoallv:
        checkMpi(MPI_Ialltoallv(c.send, c.sendCounts.data(), c.sendDispls.data(), t, c.recv, c.recvCounts.data(),
                                c.recvDispls.data(), t, comm_, &r),
                 "MPI_Ialltoallv");
        break;
    }
    return fromMpi(r, -1);
  }

 private:
  void postNoticeReceive() {
    checkMpi(MPI_Irecv(&noticeBuffer_, sizeof(Notice), MPI_BYTE, MPI_ANY_SOURCE, kNoticeTag, control_,
                       &noticeRequest_),
             "MPI_Irecv(notice)");
  }

  std::shared_ptr<MpiRuntime> runtime_;
  MPI_Comm comm_;
  MPI_Comm control_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  Notice noticeBuffer_{};
  MPI_Request noticeRequest_ = MPI_REQUEST_NULL;
  Fingerprint fingerprint_{};
};

}  // namespace

std::unique_ptr<Transport> makeMpiTransport(std::shared_ptr<MpiRuntime> runtime, MPI_Comm comm) {
  return std::make_unique<MpiTransport>(std::move(runtime), comm);
}

}  // namespace paraxis::comm::mpi
