#pragma once
// The collective α-β-γ formulas as the cost model uses them. They live in the leaf library
// `alphabeta` so that the runtime (comm), which must not depend on cost, picks algorithms by
// the same formulas the oracle predicts with.
#include "alphabeta/collective_cost.hpp"

namespace paraxis::cost {

using alphabeta::AllreduceChoice;
using alphabeta::AllreduceEstimate;
using alphabeta::bestFlatAllreduce;
using alphabeta::binomialAllreduce;
using alphabeta::binomialBroadcast;
using alphabeta::choiceName;
using alphabeta::hierarchicalAllreduce;
using alphabeta::LinkParams;
using alphabeta::pairwiseAlltoall;
using alphabeta::pointToPoint;
using alphabeta::rabenseifnerAllreduce;
using alphabeta::recursiveDoublingAllreduce;
using alphabeta::ringAllgather;
using alphabeta::ringAllreduce;
using alphabeta::ringReduceScatter;

}  // namespace paraxis::cost
