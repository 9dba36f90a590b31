#include "train/checkpoint.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "comm/collectives.hpp"
#include "core/error.hpp"

namespace paraxis::train {
namespace {

namespace fs = std::filesystem;

void writeList(torch::serialize::OutputArchive& archive, const std::string& name, const std::vector<torch::Tensor>& list) {
  for (std::size_t i = 0; i < list.size(); ++i) archive.write(fmt::format("{}.{}", name, i), list[i]);
}

void readList(torch::serialize::InputArchive& archive, const std::string& name, std::vector<torch::Tensor>& list,
              const std::string& file) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    torch::Tensor value;
    if (!archive.try_read(fmt::format("{}.{}", name, i), value) || value.sizes() != list[i].sizes()) {
      throw ConfigError(fmt::format("{}: '{}.{}' is missing or has another shape: a checkpoint of another model", file,
                                    name, i));
    }
    torch::NoGradGuard noGrad;
    list[i].copy_(value);
  }
}

}  // namespace

void saveCheckpoint(const comm::Communicator& comm, const std::string& dir, const TrainingState& s) {
  const fs::path step = fs::path(dir) / fmt::format("step-{}", s.iterationsDone);
  fs::create_directories(step);
  torch::serialize::OutputArchive archive;
  writeList(archive, "parameter", s.parameters);
  writeList(archive, "buffer", s.buffers);
  writeList(archive, "momentum", s.momentum);
  writeList(archive, "residual", s.residuals);
  archive.write("rng", at::detail::getDefaultCPUGenerator().get_state());
  archive.write("iterations", torch::tensor(s.iterationsDone, torch::kInt64));
  archive.write("ranks", torch::tensor(static_cast<std::int64_t>(comm.size()), torch::kInt64));
  const fs::path file = step / fmt::format("rank-{}.pt", comm.rank());
  const fs::path temporary = file.string() + ".tmp";
  archive.save_to(temporary.string());
  fs::rename(temporary, file);
  barrier(comm);  // every rank's file is complete before `latest` moves
  if (comm.rank() == 0) {
    const fs::path latest = fs::path(dir) / "latest";
    const fs::path temporaryLatest = latest.string() + ".tmp";
    std::ofstream(temporaryLatest) << step.filename().string() << '\n';
    fs::rename(temporaryLatest, latest);
  }
  barrier(comm);
}

std::int64_t loadCheckpoint(const comm::Communicator& comm, const std::string& dir, TrainingState& s) {
  const fs::path latest = fs::path(dir) / "latest";
  std::ifstream in(latest);
  std::string step;
  if (!in || !(in >> step)) throw ConfigError(fmt::format("{}: no checkpoint to resume from", latest.string()));
  const fs::path file = fs::path(dir) / step / fmt::format("rank-{}.pt", comm.rank());
  if (!fs::exists(file)) throw ConfigError(fmt::format("{}: missing (was the run on another rank count?)", file.string()));
  torch::serialize::InputArchive archive;
  archive.load_from(file.string());
  torch::Tensor ranks;
  archive.read("ranks", ranks);
  if (ranks.item<std::int64_t>() != comm.size()) {
    throw ConfigError(fmt::format("{}: written by {} ranks, resumed on {}", file.string(), ranks.item<std::int64_t>(), comm.size()));
  }
  readList(archive, "parameter", s.parameters, file.string());
  readList(archive, "buffer", s.buffers, file.string());
  readList(archive, "momentum", s.momentum, file.string());
  readList(archive, "residual", s.residuals, file.string());
  torch::Tensor rng;
  archive.read("rng", rng);
  at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle: shares the default
  generator.set_state(rng);
  torch::Tensor iterations;
  archive.read("iterations", iterations);
  s.iterationsDone = iterations.item<std::int64_t>();
  return s.iterationsDone;
}

}  // namespace paraxis::train
