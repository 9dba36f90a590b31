// Seeded fuzzing of the three readers users feed files to: models, clusters and measured runs.
// Each starts from valid documents and applies random edits (characters, extreme numbers,
// lines dropped, duplicated or swapped). Every input must either load, with every count and
// time it yields finite (and, for clusters, every plan on them), or fail with a paraxis::Error:
// a one-line user error. Anything else (a crash, a hang under ctest's timeout, another
// exception, a nan) fails the test and prints the input.
//
// FUZZ_ITERATIONS=N (default 10000 per reader) runs longer; FUZZ_SEED picks another sequence.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "calib/calibration.hpp"
#include "core/error.hpp"
#include "graph/yaml_loader.hpp"
#include "graph/zoo/zoo.hpp"
#include "hw/cluster_yaml.hpp"
#include "hw/presets.hpp"
#include "plan/planner.hpp"

namespace paraxis {
namespace {

long envOr(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtol(value, nullptr, 10) : fallback;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : random_(seed) {}

  std::string mutate(std::string text) {
    const int edits = 1 + pick(4);
    for (int i = 0; i < edits; ++i) text = edit(text);
    return text;
  }

 private:
  int pick(int n) { return static_cast<int>(random_() % static_cast<std::uint64_t>(n)); }

  std::string edit(const std::string& text) {
    static const std::vector<std::string> kNumbers{"0", "-1", "1e308", "-1e308", "nan", "inf", "1e-320",
                                                   "99999999999999999999", "2147483648", "9223372036854775807",
                                                   "3.5", "1e9", "", "0x10"};
    static const std::string kCharacters = "0123456789:-[]{},. \n\t#xe\"'&*!|>%";
    if (text.empty()) return kNumbers[pick(static_cast<int>(kNumbers.size()))];
    const std::size_t at = random_() % text.size();
    switch (pick(7)) {
      case 0: return text.substr(0, at) + text.substr(at + 1);                           // drop a character
      case 1: return text.substr(0, at) + kCharacters[pick(static_cast<int>(kCharacters.size()))] + text.substr(at);
      case 2: return replaceNumber(text, at, kNumbers[pick(static_cast<int>(kNumbers.size()))]);
      case 3: return lines(text, at, 0);                                                 // drop a line
      case 4: return lines(text, at, 1);                                                 // duplicate a line
      case 5: return lines(text, at, 2);                                                 // swap two lines
      default: return text.substr(0, at);                                                // truncate
    }
  }

  // Replaces the number (digits, sign, dot, exponent) at or after `at` with `value`.
  static std::string replaceNumber(const std::string& text, std::size_t at, const std::string& value) {
    const auto isNumber = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == 'e'; };
    std::size_t begin = at;
    while (begin < text.size() && !std::isdigit(static_cast<unsigned char>(text[begin]))) ++begin;
    if (begin == text.size()) return text;
    while (begin > 0 && isNumber(text[begin - 1])) --begin;
    std::size_t end = begin;
    while (end < text.size() && isNumber(text[end])) ++end;
    return text.substr(0, begin) + value + text.substr(end);
  }

  std::string lines(const std::string& text, std::size_t at, int how) {
    std::vector<std::string> all;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) all.push_back(line);
    if (all.empty()) return text;
    const std::size_t i = at % all.size();
    const std::size_t j = random_() % all.size();
    if (how == 0) all.erase(all.begin() + static_cast<std::ptrdiff_t>(i));
    if (how == 1) all.insert(all.begin() + static_cast<std::ptrdiff_t>(i), all[i]);
    if (how == 2) std::swap(all[i], all[j]);
    std::string out;
    for (const std::string& line : all) out += line + "\n";
    return out;
  }

  std::mt19937_64 random_;
};

// Runs `check` on `iterations` mutations of the seeds; counts the accepted inputs.
void fuzz(const std::vector<std::string>& seeds, std::uint64_t salt, const std::function<void(const std::string&)>& check) {
  const long iterations = envOr("FUZZ_ITERATIONS", 10000);
  Mutator mutator(static_cast<std::uint64_t>(envOr("FUZZ_SEED", 1)) * 1000003 + salt);
  long accepted = 0;
  long refused = 0;
  for (long i = 0; i < iterations; ++i) {
    const std::string input = mutator.mutate(seeds[static_cast<std::size_t>(i) % seeds.size()]);
    try {
      check(input);
      ++accepted;
    } catch (const Error& e) {
      ++refused;
      const std::string what = e.what();
      ASSERT_EQ(what.find('\n'), std::string::npos) << "a user error of more than one line: " << what;
    } catch (const std::exception& e) {
      FAIL() << "input " << i << " ended in a non-user error: " << e.what() << "\n--- input ---\n" << input;
    }
  }
  std::cout << iterations << " inputs: " << accepted << " accepted, " << refused << " refused with one line\n";
  EXPECT_GT(refused, 0);
}

void expectFinite(double value, const std::string& what, const std::string& input) {
  ASSERT_TRUE(std::isfinite(value)) << what << " is " << value << "\n--- input ---\n" << input;
}

TEST(Fuzz, ModelReader) {
  const std::string data = PARAXIS_TEST_DATA;
  const std::vector<std::string> seeds{readFile(data + "/lenet.yaml"), readFile(data + "/residual.yaml"),
                                       readFile(data + "/unet.yaml")};
  fuzz(seeds, 1, [](const std::string& text) {
    const graph::Model model = graph::loadModelText(text, "fuzz.yaml");
    const graph::ModelTotals& t = model.totals();
    expectFinite(t.forwardFlops + t.backwardDataFlops + t.backwardWeightFlops, "the model's FLOPs", text);
    ASSERT_GE(t.params, 0) << text;
    ASSERT_GE(t.activationBytes, 0) << text;
  });
}

TEST(Fuzz, ClusterReader) {
  const std::string data = PARAXIS_TEST_DATA;
  const std::vector<std::string> seeds{hw::clusterText("abci"), hw::clusterText("local"), readFile(data + "/two_hosts.yaml")};
  const graph::Model lenet = graph::buildZooModel("lenet");
  int planned = 0;
  fuzz(seeds, 2, [&](const std::string& text) {
    const hw::Cluster cluster = hw::loadClusterText(text, "fuzz.yaml");
    if (++planned % 10 != 0) return;  // every tenth accepted cluster is planned on
    plan::PlanInputs in{.model = &lenet, .cluster = &cluster, .datasetSamples = 60000};
    plan::PlanRequest request;
    request.gpus = {1, 2};
    for (const plan::Estimate& e : plan::planAll(in, request)) {
      if (!e.feasible) continue;
      expectFinite(e.time.iteration(), "an iteration time", text);
      expectFinite(e.memory.total(), "a memory total", text);
      expectFinite(e.samplesPerSecond, "samples/s", text);
    }
  });
}

TEST(Fuzz, MeasuredRunsReader) {
  const std::string data = PARAXIS_TEST_DATA;
  const std::vector<std::string> seeds{readFile(data + "/paradl_abci_resnet50_runs.csv")};
  const std::string path = (std::filesystem::temp_directory_path() / "paraxis-fuzz-runs.csv").string();
  const graph::Model resnet = graph::buildZooModel("resnet50");
  const hw::Cluster abci = hw::loadClusterText(hw::clusterText("abci"), "abci");
  const plan::PlanInputs in{.model = &resnet, .cluster = &abci, .datasetSamples = 1281167};
  int compared = 0;
  fuzz(seeds, 3, [&](const std::string& text) {
    std::ofstream(path) << text;
    const std::vector<calib::MeasuredRun> runs = calib::readMeasuredRuns(path);
    for (const calib::MeasuredRun& run : runs) {
      expectFinite(run.total + run.compute + run.communication, "a measured time", text);
    }
    if (++compared % 10 != 0) return;  // every tenth accepted file is held against the oracle
    for (const calib::RunComparison& row : calib::compareRuns(in, runs)) {
      expectFinite(row.total + row.compute + row.communication + row.error, "a prediction", text);
    }
  });
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace paraxis
