// How many copies of one inbound request go to a dark cluster: the per-request strategies of
// `hammer dark` (rest.li's RELATIVE_TRAFFIC and IDENTICAL_TRAFFIC: the Relative- and
// IdenticalTrafficMultiplierDarkClusterStrategy classes of github.com/linkedin/rest.li's
// darkcluster module). The third strategy, constant-qps, is not decided per request; it lives
// in constant_qps_dispatcher.h (included here for convenience).
//
// Both strategies aim at E[copies per request] = m · Nd / Ns (CopiesPerRequest in
// cluster_shape.h); they differ in how the fraction is rounded:
//
//  * RelativeStrategy, accumulator mode (the default): a fractional credit per dark cluster.
//    Each request adds m·Nd/Ns, sends floor(credit) copies and keeps the rest. The credit
//    starts at a random phase in [0, 1) (so that proxies started together do not fork the same
//    requests in lockstep), and after n requests the count sent is floor(phase + Σ avg), i.e.
//    within ±1 of Σ avg over any run — rest.li's coin flips drift like √n instead. The credit
//    survives shape changes: a membership update changes the increment, never the balance, so
//    there is neither a burst nor a loss. (Double arithmetic: the error per request is below
//    2^-52, so the ±1 bound holds for any realistic run; when avg is a whole number the count
//    is exact, because the phase has 32 significant bits and phase + k is then exact.)
//  * RelativeStrategy, Bernoulli mode (`--dark-sampling bernoulli`, rest.li parity):
//    floor(avg) + (u < frac(avg)) with a fresh u per request and cluster.
//  * IdenticalSelector: one u per inbound request shared by every dark cluster, so a cluster
//    with a smaller m·Nd/Ns receives a subset of the requests a larger one receives, whatever
//    order the clusters are visited in. u may be derived from a request header (UniformFromKey
//    in uniform.h) so that several hops, or several proxies, agree on the same requests.
//
// Threading: a RelativeStrategy belongs to one dark cluster on one event loop (not
// thread-safe, never shared). IdenticalSelector is a per-request value.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string_view>

#include "hammer/dark/cluster_shape.h"
#include "hammer/dark/constant_qps_dispatcher.h"
#include "hammer/dark/uniform.h"
#include "hammer/http/message.h"

namespace hammer::dark {

class RelativeStrategy {
 public:
  enum class Mode : uint8_t { kAccumulator, kBernoulli };

  // `seed` gives the accumulator's initial phase and the Bernoulli draws; give each cluster
  // on each loop its own seed.
  explicit RelativeStrategy(uint64_t seed, Mode mode = Mode::kAccumulator);

  // Copies of the current request to send to the cluster of `shape` (0 when Ns is 0).
  uint32_t CopiesFor(const ClusterShape& shape);

  Mode mode() const { return mode_; }
  double credit() const { return credit_; }  // accumulator: the carried fraction, in [0, 1)

 private:
  SplitMix64 rng_;
  Mode mode_;
  double credit_;
};

// floor(avg) + (u < frac(avg)) for avg = CopiesPerRequest(shape) and u in [0, 1): for avg < 1,
// one copy iff u < m·Nd/Ns. Shared by IdenticalSelector and the Bernoulli mode.
uint32_t CopiesForUniform(const ClusterShape& shape, double u);

// The shared number of one inbound request (IDENTICAL_TRAFFIC). Build one per request, then
// ask it for every dark cluster.
class IdenticalSelector {
 public:
  explicit IdenticalSelector(double u) : u_(u) {}

  // Derives u from the first header named `header_name` (case-insensitive) when the name is not
  // empty and that header is present with a non-empty value; otherwise draws u from `rng`
  // (one draw per request, whatever the number of clusters).
  IdenticalSelector(std::mt19937_64& rng, std::string_view header_name,
                    std::span<const http::Header> headers);

  uint32_t CopiesFor(const ClusterShape& shape) const { return CopiesForUniform(shape, u_); }

  double u() const { return u_; }
  bool from_header() const { return from_header_; }

 private:
  double u_;
  bool from_header_ = false;
};

}  // namespace hammer::dark
