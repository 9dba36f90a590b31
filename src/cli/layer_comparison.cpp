#include "cli/layer_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/table.hpp"
#include "graph/layer.hpp"
#include "plan/oracle.hpp"

namespace paraxis::cli {

double LayerComparison::off() const {
  const bool backward = measured.backwardCalls > 0;
  return (predicted.forward - measured.forward) + (backward ? predicted.backward - measured.backward : 0) +
         (predicted.communication - measured.communication);
}

std::vector<LayerComparison> compareLayers(const plan::PlanInputs& in, const calib::MeasuredRun& run,
                                           const calib::RankTraces& trace, const std::string& tracePath) {
  const std::vector<calib::MeasuredLayer> measured =
      calib::layersOfTrace(trace, run.breakdownRank, tracePath);
  const graph::Model& model = *in.model;
  const std::vector<plan::LayerTime> predicted = plan::Oracle(in).layerTimes(run.strategy);
  std::vector<LayerComparison> rows;
  bool anyMeasured = false;
  for (int i = 0; i < model.size() && static_cast<std::size_t>(i) < predicted.size(); ++i) {
    LayerComparison row{model.layer(i).name, graph::kindName(model.layer(i)), {},
                        predicted[static_cast<std::size_t>(i)]};
    const auto m =
        std::find_if(measured.begin(), measured.end(), [&](const auto& l) { return l.name == row.layer; });
    if (m != measured.end()) row.measured = *m;
    anyMeasured = anyMeasured || m != measured.end();
    const plan::LayerTime& p = row.predicted;
    if (m != measured.end() || p.forward + p.backward + p.communication > 0) rows.push_back(std::move(row));
  }
  if (!anyMeasured) {
    throw ConfigError(
        fmt::format("--trace {}: none of its layers ('{}', ...) is in model '{}': was it written by the run "
                    "in {}?",
                    tracePath, measured.front().name, model.name(), run.label));
  }
  return rows;
}

namespace {

std::string ms(double seconds) {
  return fmt::format("{:.3f}", seconds * 1e3);
}

// The relative error of a predicted time, or "-" where the trace has none.
std::string errorCell(double predicted, double measured, int calls) {
  if (calls == 0 || measured <= 0) return "-";
  return fmt::format("{:+.0f}%", (predicted / measured - 1) * 100);
}

}  // namespace

void printLayerComparison(const std::vector<LayerComparison>& rows, const std::string& tracePath,
                          std::ostream& out) {
  Table t;
  for (const char* h :
       {"layer", "rank", "meas fwd", "bwd", "comm", "pred fwd", "bwd", "comm", "fwd err", "bwd err", "off"}) {
    t.addColumn(h, std::string(h) == "layer" ? Table::Align::kLeft : Table::Align::kRight);
  }
  plan::LayerTime measuredSum, predictedSum;
  double offSum = 0;
  for (const LayerComparison& r : rows) {
    const calib::MeasuredLayer& m = r.measured;
    const plan::LayerTime& p = r.predicted;
    const bool timed = m.forwardCalls > 0, backward = m.backwardCalls > 0;
    t.addRow({r.layer, timed ? std::to_string(m.rank) : "-", timed ? ms(m.forward) : "-",
              backward ? ms(m.backward) : "-", timed ? ms(m.communication) : "-", ms(p.forward),
              ms(p.backward), ms(p.communication), errorCell(p.forward, m.forward, m.forwardCalls),
              errorCell(p.backward, m.backward, m.backwardCalls),
              timed ? fmt::format("{:+.3f}", r.off() * 1e3) : "-"});
    measuredSum.forward += m.forward, measuredSum.backward += m.backward,
        measuredSum.communication += m.communication;
    predictedSum.forward += p.forward, predictedSum.backward += p.backward,
        predictedSum.communication += p.communication;
    if (timed) offSum += r.off();
  }
  t.addRule();
  t.addRow({"total", "", ms(measuredSum.forward), ms(measuredSum.backward), ms(measuredSum.communication),
            ms(predictedSum.forward), ms(predictedSum.backward), ms(predictedSum.communication),
            errorCell(predictedSum.forward, measuredSum.forward, 1),
            errorCell(predictedSum.backward, measuredSum.backward, 1), fmt::format("{:+.3f}", offSum * 1e3)});
  out << fmt::format(
      "\nper layer against {} (ms; measured: the medians of its calls in the measured steps on the rank "
      "that ran it, compute less the communication inside; predicted: plan --explain-layers's, before "
      "the gradient schedule's stretch; a pipeline's: one micro-batch; off: predicted less measured)\n",
      tracePath);
  t.print(out);
  std::vector<const LayerComparison*> misses;
  for (const LayerComparison& r : rows) {
    if (r.measured.forwardCalls > 0) misses.push_back(&r);
  }
  std::sort(misses.begin(), misses.end(),
            [](auto* a, auto* b) { return std::fabs(a->off()) > std::fabs(b->off()); });
  misses.resize(std::min<std::size_t>(misses.size(), 3));
  std::vector<std::string> named;
  for (const LayerComparison* r : misses)
    named.push_back(fmt::format("{} {:+.3f} ms", r->layer, r->off() * 1e3));
  out << fmt::format("largest misses: {}\n", fmt::join(named, ", "));
  printKindSums(sumByKind(rows), out);
}

std::vector<KindSum> sumByKind(const std::vector<LayerComparison>& rows) {
  std::vector<KindSum> kinds;
  for (const LayerComparison& r : rows) {
    if (r.measured.forwardCalls == 0) continue;
    auto k = std::find_if(kinds.begin(), kinds.end(), [&](const KindSum& s) { return s.kind == r.kind; });
    if (k == kinds.end()) k = kinds.insert(kinds.end(), KindSum{.kind = r.kind});
    ++k->layers;
    k->measuredForward += r.measured.forward, k->predictedForward += r.predicted.forward;
    if (r.measured.backwardCalls > 0) {
      k->measuredBackward += r.measured.backward, k->predictedBackward += r.predicted.backward;
    }
    k->off += r.off();
  }
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const KindSum& a, const KindSum& b) { return std::fabs(a.off) > std::fabs(b.off); });
  return kinds;
}

void printKindSums(const std::vector<KindSum>& kinds, std::ostream& out) {
  std::vector<std::string> named;
  for (const KindSum& k : kinds) {
    named.push_back(fmt::format("{} {:+.3f} ms ({} / {}, {} layer{})", k.kind, k.off * 1e3,
                                errorCell(k.predictedForward, k.measuredForward, 1),
                                errorCell(k.predictedBackward, k.measuredBackward, 1), k.layers,
                                k.layers == 1 ? "" : "s"));
  }
  out << fmt::format("by kind (predicted less measured; forward / backward error): {}\n", fmt::join(named, ", "));
}

nlohmann::json kindSumsJson(const std::vector<KindSum>& kinds) {
  nlohmann::json out = nlohmann::json::array();
  for (const KindSum& k : kinds) {
    out.push_back({{"kind", k.kind},
                   {"layers", k.layers},
                   {"measured_forward_s", k.measuredForward},
                   {"predicted_forward_s", k.predictedForward},
                   {"measured_backward_s", k.measuredBackward},
                   {"predicted_backward_s", k.predictedBackward},
                   {"off_s", k.off}});
  }
  return out;
}

nlohmann::json layerComparisonJson(const std::vector<LayerComparison>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const LayerComparison& r : rows) {
    const calib::MeasuredLayer& m = r.measured;
    const auto timed = [&](double seconds, int calls) {
      return calls > 0 ? nlohmann::json(seconds) : nlohmann::json(nullptr);
    };
    out.push_back({{"layer", r.layer},
                   {"rank", m.forwardCalls > 0 ? nlohmann::json(m.rank) : nlohmann::json(nullptr)},
                   {"measured",
                    {{"forward_s", timed(m.forward, m.forwardCalls)},
                     {"backward_s", timed(m.backward, m.backwardCalls)},
                     {"communication_s", timed(m.communication, m.forwardCalls)},
                     {"forward_calls", m.forwardCalls},
                     {"backward_calls", m.backwardCalls}}},
                   {"predicted",
                    {{"forward_s", r.predicted.forward},
                     {"backward_s", r.predicted.backward},
                     {"communication_s", r.predicted.communication}}},
                   {"off_s", m.forwardCalls > 0 ? nlohmann::json(r.off()) : nlohmann::json(nullptr)}});
  }
  return out;
}

void printExposedGradient(const calib::ExposedGradient& m, const plan::ExposedGradientParts& p,
                          std::ostream& out) {
  if (m.steps == 0) return;
  out << fmt::format(
      "\nexposed gradient time a step (ms, the mean over {} measured steps of every rank): measured {} (the "
      "forward's first wait for a group {}, its later waits {}, after backward {}); predicted {} (the "
      "reductions' own {}, one wait a group beside them {}, the ranks' drift {})\n",
      m.steps, ms(m.total()), ms(m.forwardFirst), ms(m.forwardLater), ms(m.afterBackward), ms(p.total()),
      ms(p.reductions), ms(p.groupAwaits), ms(p.drift));
  if (m.inFlightShare > 0) {
    out << fmt::format(
        "backward ended with a reduction call of the engine in flight in {:.0f}% of the steps; it ran on "
        "{} ms past it, the next forward's first group behind it\n",
        m.inFlightShare * 100, ms(m.inFlightAfter));
  }
}

nlohmann::json exposedGradientJson(const calib::ExposedGradient& m, const plan::ExposedGradientParts& p) {
  return {{"steps", m.steps},
          {"measured_s", m.total()},
          {"forward_first_s", m.forwardFirst},
          {"forward_later_s", m.forwardLater},
          {"after_backward_s", m.afterBackward},
          {"in_flight_share", m.inFlightShare},
          {"in_flight_after_s", m.inFlightAfter},
          {"predicted_s", p.total()},
          {"predicted_reductions_s", p.reductions},
          {"predicted_group_awaits_s", p.groupAwaits},
          {"predicted_drift_s", p.drift}};
}

}  // namespace paraxis::cli
