#include "train/checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>

#include "comm/agreement.hpp"
#include "core/atomic_file.hpp"
#include "core/checksum.hpp"
#include "core/error.hpp"
#include "core/option_lines.hpp"

namespace paraxis::train {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "paraxis-checkpoint";
constexpr int kVersion = 1;

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

std::uint64_t contentChecksum(std::string_view configuration, std::string_view archive) {
  return checksum64(archive, checksum64(configuration));
}

std::string encode(const std::string& configuration, const std::string& archive) {
  return fmt::format("{} {} {} {} {}\n", kMagic, kVersion, configuration.size(), archive.size(),
                     checksumHex(contentChecksum(configuration, archive))) +
         configuration + archive;
}

struct Decoded {
  std::string configuration;
  std::string_view archive;  // into the file's bytes
};

// The reason `bytes` are not one whole checkpoint, or empty (and `out` filled).
std::string decode(const std::string& bytes, Decoded& out) {
  const std::size_t newline = bytes.find('\n');
  if (newline == std::string::npos || newline > 200) return "not a paraxis checkpoint (no header line)";
  std::istringstream header(bytes.substr(0, newline));
  std::string magic, sum;
  int version = 0;
  std::uint64_t configurationBytes = 0, archiveBytes = 0;
  if (!(header >> magic >> version >> configurationBytes >> archiveBytes >> sum) || magic != kMagic) {
    return "not a paraxis checkpoint (bad header line)";
  }
  if (version != kVersion) return fmt::format("checkpoint format {} (this paraxis reads {})", version, kVersion);
  const std::uint64_t expected = newline + 1 + configurationBytes + archiveBytes;
  if (configurationBytes > bytes.size() || archiveBytes > bytes.size() || expected != bytes.size()) {
    return fmt::format("truncated or extended: {} bytes where the header promises {}", bytes.size(), expected);
  }
  out.configuration = bytes.substr(newline + 1, configurationBytes);
  out.archive = std::string_view(bytes).substr(newline + 1 + configurationBytes);
  if (checksumHex(contentChecksum(out.configuration, out.archive)) != sum) return "checksum mismatch: the file is corrupt";
  return "";
}

std::string readWhole(const fs::path& file, std::string& bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "missing (was the run on another rank count?)";
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return "cannot be read";
  bytes = text.str();
  return "";
}

// Runs `write` on every rank; when any rank fails, every rank throws the first failure.
void writeTogether(const comm::Communicator& comm, const std::function<void()>& write) {
  std::string failure;
  try {
    write();
  } catch (const std::exception& e) {  // OutputError, a file-system error, LibTorch's serialiser
    failure = e.what();
  }
  if (const auto first = comm::firstFailure(comm, failure)) throw OutputError(comm::describe(comm, *first));
}

std::string archiveBytes(const comm::Communicator& comm, const TrainingState& s) {
  torch::serialize::OutputArchive archive;
  writeList(archive, "parameter", s.parameters);
  writeList(archive, "buffer", s.buffers);
  writeList(archive, "momentum", s.momentum);
  writeList(archive, "residual", s.residuals);
  archive.write("rng", at::detail::getDefaultCPUGenerator().get_state());
  archive.write("iterations", torch::tensor(s.iterationsDone, torch::kInt64));
  archive.write("ranks", torch::tensor(static_cast<std::int64_t>(comm.size()), torch::kInt64));
  std::ostringstream stream;
  archive.save_to(stream);
  return stream.str();
}

}  // namespace

void saveCheckpoint(const comm::Communicator& comm, const std::string& dir, const TrainingState& s,
                    const std::string& configuration) {
  const fs::path step = fs::path(dir) / fmt::format("step-{}", s.iterationsDone);
  writeTogether(comm, [&] {
    const fs::path file = step / fmt::format("rank-{}.pt", comm.rank());
    std::error_code error;
    fs::create_directories(step, error);
    if (error) throw OutputError(fmt::format("--checkpoint: cannot create '{}': {}", step.string(), error.message()));
    try {
      writeFileAtomically(file.string(), encode(configuration, archiveBytes(comm, s)), "--checkpoint");
    } catch (...) {
      fs::remove(step, error);  // only when empty: nothing half-made is left behind
      fs::remove(dir, error);
      throw;
    }
  });
  // Every rank's file is whole before `latest` names the step.
  writeTogether(comm, [&] {
    if (comm.rank() == 0) {
      writeFileAtomically((fs::path(dir) / "latest").string(), step.filename().string() + "\n", "--checkpoint");
    }
  });
}

namespace {

std::optional<std::int64_t> stepNumber(const std::string& name) {
  constexpr std::string_view kPrefix = "step-";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0 || name.size() > 24) return std::nullopt;
  std::int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// The steps to try, newest first: the one `latest` names, then every older step-N.
std::vector<std::int64_t> candidateSteps(const fs::path& dir) {
  const fs::path latest = dir / "latest";
  std::ifstream in(latest);
  std::string name;
  const std::optional<std::int64_t> newest = in >> name ? stepNumber(name) : std::nullopt;
  if (!newest) throw ConfigError(fmt::format("{}: no checkpoint to resume from", latest.string()));
  std::vector<std::int64_t> steps{*newest};
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const auto n = stepNumber(entry.path().filename().string());
    if (n && *n < *newest) steps.push_back(*n);
  }
  std::sort(steps.begin() + 1, steps.end(), std::greater<>());
  return steps;
}

// Loads this rank's file of one step into `s`; the reason it cannot, or empty.
std::string loadStep(const comm::Communicator& comm, const fs::path& file, TrainingState& s, Decoded& decoded) {
  std::string bytes;
  if (std::string problem = readWhole(file, bytes); !problem.empty()) return fmt::format("{}: {}", file.string(), problem);
  if (std::string problem = decode(bytes, decoded); !problem.empty()) return fmt::format("{}: {}", file.string(), problem);
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(decoded.archive.data(), decoded.archive.size());
    torch::Tensor ranks;
    archive.read("ranks", ranks);
    if (ranks.item<std::int64_t>() != comm.size()) {
      return fmt::format("{}: written by {} ranks, resumed on {}", file.string(), ranks.item<std::int64_t>(), comm.size());
    }
    readList(archive, "parameter", s.parameters, file.string());
    readList(archive, "buffer", s.buffers, file.string());
    readList(archive, "momentum", s.momentum, file.string());
    readList(archive, "residual", s.residuals, file.string());
    torch::Tensor rng, iterations;
    archive.read("rng", rng);
    archive.read("iterations", iterations);
    at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle: shares the default
    generator.set_state(rng);
    s.iterationsDone = iterations.item<std::int64_t>();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {  // LibTorch's reader: the first line of its message
    const std::string what = e.what();
    return fmt::format("{}: unreadable archive: {}", file.string(), what.substr(0, what.find('\n')));
  }
  return "";
}

}  // namespace

std::int64_t loadCheckpoint(const comm::Communicator& comm, const std::string& dir, TrainingState& s,
                            const std::string& configuration, std::ostream& progress) {
  const std::vector<std::int64_t> steps = candidateSteps(dir);
  std::string newestProblem;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const fs::path step = fs::path(dir) / fmt::format("step-{}", steps[i]);
    Decoded decoded;
    const std::string mine = loadStep(comm, step / fmt::format("rank-{}.pt", comm.rank()), s, decoded);
    if (const auto failure = comm::firstFailure(comm, mine)) {
      if (newestProblem.empty()) newestProblem = comm::describe(comm, *failure);
      if (comm.rank() == 0) {
        progress << fmt::format("paraxis: checkpoint {} is unusable ({}); {}\n", step.string(), comm::describe(comm, *failure),
                                i + 1 < steps.size() ? fmt::format("falling back to step-{}", steps[i + 1])
                                                     : std::string("no older step"));
      }
      continue;
    }
    if (const auto d = firstDifference(decoded.configuration, configuration)) {
      throw ConfigError(fmt::format("--resume {}: {} was written with other options ({}: {} in the checkpoint, {} "
                                    "now); resume with the same options or start afresh",
                                    dir, step.filename().string(), d->key, d->first, d->second));
    }
    return s.iterationsDone;
  }
  throw ConfigError(fmt::format("--resume {}: no usable checkpoint (newest: {})", dir, newestProblem));
}

}  // namespace paraxis::train
