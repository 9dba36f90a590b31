// The MILP backend on GLPK (Debian's libglpk-dev): branch and cut from the LP relaxation, the
// caller's start solution offered as the first incumbent, the best open node's bound recorded
// as the search goes, so a run stopped at its time limit still says how far from optimal its
// answer can be.
#include <fmt/format.h>
#include <glpk.h>

#include <cmath>
#include <memory>

#include "core/error.hpp"
#include "plan/milp.hpp"

namespace paraxis::plan {
namespace {

struct SearchState {
  const std::vector<double>* start = nullptr;  // 1-based copy below
  std::vector<double> oneBased;
  bool offered = false;
  double bound = -Milp::kInfinity;
};

void onEvent(glp_tree* tree, void* info) {
  auto* state = static_cast<SearchState*>(info);
  switch (glp_ios_reason(tree)) {
    case GLP_IHEUR:
      if (!state->offered && !state->oneBased.empty()) {
        glp_ios_heur_sol(tree, state->oneBased.data());
        state->offered = true;
      }
      break;
    case GLP_ISELECT:
    case GLP_IBINGO:
      if (const int node = glp_ios_best_node(tree); node != 0) state->bound = glp_ios_node_bound(tree, node);
      break;
    default:
      break;
  }
}

int boundType(double lower, double upper) {
  if (std::isinf(lower) && std::isinf(upper)) return GLP_FR;
  if (std::isinf(upper)) return GLP_LO;
  if (std::isinf(lower)) return GLP_UP;
  return lower == upper ? GLP_FX : GLP_DB;
}

void load(glp_prob* lp, const Milp& m) {
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_cols(lp, static_cast<int>(m.variables.size()));
  for (int j = 0; j < static_cast<int>(m.variables.size()); ++j) {
    const Milp::Variable& v = m.variables[j];
    glp_set_col_bnds(lp, j + 1, boundType(v.lower, v.upper), std::isinf(v.lower) ? 0 : v.lower,
                     std::isinf(v.upper) ? 0 : v.upper);
    glp_set_obj_coef(lp, j + 1, v.objective);
    if (v.integer) glp_set_col_kind(lp, j + 1, GLP_IV);
  }
  glp_add_rows(lp, static_cast<int>(m.rows.size()));
  std::vector<int> index;
  std::vector<double> value;
  for (int i = 0; i < static_cast<int>(m.rows.size()); ++i) {
    const Milp::Row& r = m.rows[i];
    glp_set_row_bnds(lp, i + 1, boundType(r.lower, r.upper), std::isinf(r.lower) ? 0 : r.lower,
                     std::isinf(r.upper) ? 0 : r.upper);
    index.assign(1, 0);
    value.assign(1, 0);
    for (const auto& [j, a] : r.terms) index.push_back(j + 1), value.push_back(a);
    glp_set_mat_row(lp, i + 1, static_cast<int>(r.terms.size()), index.data(), value.data());
  }
}

}  // namespace

std::string milpSolverName() { return fmt::format("GLPK {}", glp_version()); }

MilpResult solveMilp(const Milp& program, const std::vector<double>& start, double timeLimitSeconds) {
  glp_term_out(GLP_OFF);
  std::unique_ptr<glp_prob, void (*)(glp_prob*)> lp(glp_create_prob(), glp_delete_prob);
  load(lp.get(), program);
  const int limitMs = static_cast<int>(std::min(timeLimitSeconds * 1e3, 2e9));
  glp_smcp simplex;
  glp_init_smcp(&simplex);
  simplex.msg_lev = GLP_MSG_OFF;
  simplex.tm_lim = limitMs;
  MilpResult result;
  if (glp_simplex(lp.get(), &simplex) != 0 || glp_get_status(lp.get()) != GLP_OPT) {
    result.status = glp_get_status(lp.get()) == GLP_NOFEAS ? MilpResult::Status::kInfeasible
                                                          : MilpResult::Status::kNoSolution;
    return result;
  }
  SearchState state;
  state.bound = glp_get_obj_val(lp.get());
  if (!start.empty()) {
    state.oneBased.assign(1, 0);
    state.oneBased.insert(state.oneBased.end(), start.begin(), start.end());
  }
  glp_iocp search;
  glp_init_iocp(&search);
  search.msg_lev = GLP_MSG_OFF;
  search.tm_lim = limitMs;
  search.cb_func = onEvent;
  search.cb_info = &state;
  const int rc = glp_intopt(lp.get(), &search);
  if (rc != 0 && rc != GLP_ETMLIM) throw Error(fmt::format("GLPK's branch and cut failed (glp_intopt code {})", rc));
  const int status = glp_mip_status(lp.get());
  if (status == GLP_NOFEAS) result.status = MilpResult::Status::kInfeasible;
  if (status != GLP_OPT && status != GLP_FEAS) return result;
  result.status = status == GLP_OPT && rc == 0 ? MilpResult::Status::kOptimal : MilpResult::Status::kFeasible;
  result.objective = glp_mip_obj_val(lp.get());
  result.bound = result.status == MilpResult::Status::kOptimal ? result.objective : std::min(state.bound, result.objective);
  for (int j = 0; j < static_cast<int>(program.variables.size()); ++j) result.values.push_back(glp_mip_col_val(lp.get(), j + 1));
  return result;
}

}  // namespace paraxis::plan
