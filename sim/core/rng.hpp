#pragma once
// Deterministic random numbers: xoshiro256** (Blackman & Vigna, 2018) seeded by splitmix64.
// Every sampler is written here rather than taken from <random>, whose distributions are
// implementation-defined, and the transcendental functions the samplers need (log, exp) are our
// own polynomial versions built from IEEE-exact operations only, so a seed gives the same
// numbers, bit for bit, on every platform and compiler.
#include <cstdint>

namespace headroom {

// One step of splitmix64 (Steele, Lea & Flood, 2014): advances `state` and returns its output.
std::uint64_t splitmix64(std::uint64_t& state);

class Rng {
 public:
  // Stream 0 of a seed is xoshiro256** with its state filled by four splitmix64 outputs from
  // `seed` (the seeding its authors recommend). Other streams mix the stream number into the
  // seed first, so independent parts of a simulation (arrivals, lengths, thinning) draw from
  // independent sequences and changing one does not shift the others.
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0);

  std::uint64_t next_u64();

  // Uniform on [0, 1) with 53 random bits (every value a multiple of 2^-53).
  double uniform();
  // Uniform on [lo, hi).
  double uniform(double lo, double hi);
  // Uniform integer on [lo, hi], both included, without modulo bias (rejection).
  std::uint64_t uniform_int(std::uint64_t lo, std::uint64_t hi);
  // True with probability p.
  bool bernoulli(double p);

  // Exponential with the given rate (mean 1/rate), by inversion.
  double exponential(double rate);
  // Normal by Marsaglia's polar method (needs only log and sqrt); the second value of each
  // pair is kept for the next call.
  double normal();
  double normal(double mean, double stddev);
  // exp(N(mu, sigma^2)).
  double lognormal(double mu, double sigma);
  // Gamma(shape k, scale theta), mean k*theta, by Marsaglia & Tsang (2000); for k < 1 the
  // boost Gamma(k) = Gamma(k+1) * U^(1/k) from the same paper.
  double gamma(double shape, double scale);
  // Zipf on {1..n}: P(k) proportional to k^-exponent (exponent > 0). See ZipfSampler, which
  // keeps the set-up for repeated draws.
  std::uint64_t zipf(std::uint64_t n, double exponent);

 private:
  std::uint64_t s_[4];
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

// Zipf on {1..n} by rejection-inversion (Hoermann & Derflinger, ACM TOMACS 6(3), 1996):
// O(1) time and memory for any n; the constants depend only on n and the exponent.
class ZipfSampler {
 public:
  ZipfSampler(std::uint64_t n, double exponent);
  std::uint64_t operator()(Rng& rng) const;

 private:
  double h(double x) const;      // x^-q
  double H(double x) const;      // integral of h from 1 to x
  double H_inv(double y) const;  // its inverse
  std::uint64_t n_;
  double q_, h_x1_ = 0, h_n_ = 0, squeeze_ = 0;
};

// Platform-independent natural log and exp (about 1 ulp), made of +, -, *, /, sqrt and exact
// scaling (frexp/ldexp) only. Used by the samplers; exposed so tests can check their accuracy.
double portable_log(double x);
double portable_exp(double x);
double portable_log1p(double x);
double portable_expm1(double x);

}  // namespace headroom
