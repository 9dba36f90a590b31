#pragma once
// α-β-γ costs of the collective and point-to-point algorithms (COST-MODELS.md section 3).
// m is the message size in bytes (the whole vector for allreduce and broadcast, the whole
// gathered / scattered vector for allgather and reduce-scatter, one rank's total send volume
// for all-to-all); p the number of ranks. The runtime in comm/ implements each algorithm
// with exactly these steps, and `paraxis bench comm` prints measured beside these values.
#include <string_view>

namespace paraxis::alphabeta {

struct LinkParams {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte on the wire
  double gamma = 0;  // seconds per byte reduced
};

// 2(p-1) steps of m/p: 2(p-1)α + 2((p-1)/p)mβ + ((p-1)/p)mγ.
double ringAllreduce(int p, double m, const LinkParams& l);
// ⌈log2 p⌉ exchanges of the whole vector, plus a fold for non-powers of two.
double recursiveDoublingAllreduce(int p, double m, const LinkParams& l);
// Reduce-scatter by recursive halving, allgather by recursive doubling:
// 2 log2(p')α + 2((p'-1)/p')mβ + ((p'-1)/p')mγ, plus the fold 2(α + mβ) + mγ when p != p'.
double rabenseifnerAllreduce(int p, double m, const LinkParams& l);
// Binomial reduce then broadcast: 2⌈log2 p⌉(α + mβ) + ⌈log2 p⌉mγ.
double binomialAllreduce(int p, double m, const LinkParams& l);
// Ring reduce-scatter inside a node of L ranks, ring allreduce of each m/L shard across N
// nodes, ring allgather inside the node:
// 2(L-1)α_i + 2((L-1)/L)mβ_i + ((L-1)/L)mγ + 2(N-1)α_e + 2((N-1)/N)(m/L)β_e + ((N-1)/N)(m/L)γ.
double hierarchicalAllreduce(int local, int nodes, double m, const LinkParams& intra, const LinkParams& inter);
// (p-1)α + ((p-1)/p)mβ.
double ringAllgather(int p, double m, const LinkParams& l);
// (p-1)α + ((p-1)/p)mβ + ((p-1)/p)mγ.
double ringReduceScatter(int p, double m, const LinkParams& l);
// ⌈log2 p⌉(α + mβ).
double binomialBroadcast(int p, double m, const LinkParams& l);
// p-1 pairwise exchanges of m/p: (p-1)(α + (m/p)β).
double pairwiseAlltoall(int p, double m, const LinkParams& l);
// α + mβ.
double pointToPoint(double m, const LinkParams& l);

enum class AllreduceChoice { kRing, kRecursiveDoubling, kRabenseifner, kHierarchical };
std::string_view choiceName(AllreduceChoice choice);

struct AllreduceEstimate {
  AllreduceChoice algorithm;
  double seconds;
};

// The fastest flat algorithm for p ranks and m bytes (hierarchical needs local/nodes).
AllreduceEstimate bestFlatAllreduce(int p, double m, const LinkParams& l);

}  // namespace paraxis::alphabeta
