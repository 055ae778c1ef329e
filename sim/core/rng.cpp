#include "sim/core/rng.hpp"

#include <array>
#include <cmath>
#include <limits>

// Bit-identical results need every multiply-add rounded separately. GCC in ISO mode (-std=c++20,
// CMAKE_CXX_EXTENSIONS OFF) already contracts nothing; clang contracts within an expression
// unless told not to.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace headroom {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^20 (fdlibm's e_exp.c / e_log.c constants).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kSqrtHalf = 0.70710678118654752440;

// 1/i! for the exp polynomial; the same divisions on every IEEE platform.
constexpr std::array<double, 18> inverse_factorials() {
  std::array<double, 18> c{};
  c[0] = 1.0;
  for (std::size_t i = 1; i < c.size(); ++i) c[i] = c[i - 1] / static_cast<double>(i);
  return c;
}
constexpr auto kInvFact = inverse_factorials();

inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double portable_log(double x) {
  if (std::isnan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (std::isinf(x)) return kInf;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1), exact
  if (m < kSqrtHalf) {
    m *= 2.0;
    --e;
  }
  // m in [sqrt(1/2), sqrt(2)): log m = 2 atanh(s) with s = (m-1)/(m+1), |s| < 0.172, so the
  // odd series 2(s + s^3/3 + s^5/5 + ...) reaches double precision by the s^25 term.
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double s2 = s * s;
  double p = 1.0 / 25.0;
  for (int k = 11; k >= 0; --k) p = p * s2 + 1.0 / static_cast<double>(2 * k + 1);
  const double log_m = 2.0 * s * p;
  const double de = static_cast<double>(e);
  return de * kLn2Hi + (log_m + de * kLn2Lo);
}

double portable_exp(double x) {
  if (std::isnan(x)) return kNaN;
  if (x > 709.782712893383973096) return kInf;
  if (x < -745.13321910194110842) return 0.0;
  // x = k ln2 + r with |r| <= ln2/2; exp(r) by its Taylor series to r^17/17!.
  const double k = std::floor(x * kInvLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = kInvFact[kInvFact.size() - 1];
  for (std::size_t i = kInvFact.size() - 1; i-- > 0;) p = p * r + kInvFact[i];
  int ki = static_cast<int>(k);
  if (ki > 1023) {  // 2^1024 is not a double; scale in two steps
    p *= 2.0;
    --ki;
  }
  return std::ldexp(p, ki);
}

double portable_log1p(double x) {
  // Goldberg's trick: log(u) * x / (u - 1) cancels the rounding of u = 1 + x.
  if (std::isnan(x) || x < -1.0) return kNaN;
  const double u = 1.0 + x;
  if (u == 1.0) return x;
  if (std::isinf(u)) return kInf;
  return portable_log(u) * x / (u - 1.0);
}

double portable_expm1(double x) {
  // Kahan's trick, the exp counterpart of the one above.
  const double u = portable_exp(x);
  if (u == 1.0) return x;
  if (std::isinf(u)) return kInf;
  const double um1 = u - 1.0;
  if (um1 == -1.0) return -1.0;
  return um1 * x / portable_log(u);
}

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t x = seed;
  if (stream != 0) {
    std::uint64_t m = stream;
    x ^= splitmix64(m);
  }
  for (auto& word : s_) word = splitmix64(x);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

std::uint64_t Rng::uniform_int(std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t range = hi - lo;
  if (range == std::numeric_limits<std::uint64_t>::max()) return next_u64();
  const std::uint64_t n = range + 1;
  const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n: values below it would bias r % n
  for (;;) {
    const std::uint64_t r = next_u64();
    if (r >= threshold) return lo + r % n;
  }
}

bool Rng::bernoulli(double p) { return uniform() < p; }

double Rng::exponential(double rate) { return -portable_log1p(-uniform()) / rate; }

double Rng::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  double u = 0.0, v = 0.0, s = 0.0;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * portable_log(s) / s);
  spare_normal_ = v * f;
  has_spare_normal_ = true;
  return u * f;
}

double Rng::normal(double mean, double stddev) { return mean + stddev * normal(); }

double Rng::lognormal(double mu, double sigma) { return portable_exp(mu + sigma * normal()); }

double Rng::gamma(double shape, double scale) {
  if (shape < 1.0) {
    const double g = gamma(shape + 1.0, 1.0);
    const double u = 1.0 - uniform();  // (0, 1]
    return scale * g * portable_exp(portable_log(u) / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0.0, v = 0.0;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return scale * d * v;
    if (portable_log(u) < 0.5 * x2 + d * (1.0 - v + portable_log(v))) return scale * d * v;
  }
}

namespace {

// H and its inverse are written with expm1/log1p so that they stay accurate as q approaches 1,
// where H(x) = (x^(1-q) - 1) / (1-q) becomes log x.
double expm1_over(double t) { return t == 0.0 ? 1.0 : portable_expm1(t) / t; }
double log1p_over(double t) { return t == 0.0 ? 1.0 : portable_log1p(t) / t; }

}  // namespace

double ZipfSampler::h(double x) const { return portable_exp(-q_ * portable_log(x)); }

double ZipfSampler::H(double x) const {
  const double lx = portable_log(x);
  return expm1_over((1.0 - q_) * lx) * lx;
}

double ZipfSampler::H_inv(double y) const { return portable_exp(log1p_over((1.0 - q_) * y) * y); }

ZipfSampler::ZipfSampler(std::uint64_t n, double exponent) : n_(n < 1 ? 1 : n), q_(exponent) {
  // The hat is x^-q integrated over [k-1/2, k+1/2]; the k = 1 bucket is shortened to width
  // h(1) = 1 so that k = 1 is accepted without a test, and `squeeze` accepts most other draws
  // without evaluating H.
  h_x1_ = H(1.5) - 1.0;
  h_n_ = H(static_cast<double>(n_) + 0.5);
  squeeze_ = 2.0 - H_inv(H(2.5) - h(2.0));
}

std::uint64_t ZipfSampler::operator()(Rng& rng) const {
  if (n_ == 1) return 1;
  const double nd = static_cast<double>(n_);
  for (;;) {
    const double u = h_n_ + rng.uniform() * (h_x1_ - h_n_);
    const double x = H_inv(u);
    double kd = std::floor(x + 0.5);
    if (kd < 1.0) kd = 1.0;
    if (kd > nd) kd = nd;
    if (kd - x <= squeeze_ || u >= H(kd + 0.5) - h(kd)) return static_cast<std::uint64_t>(kd);
  }
}

std::uint64_t Rng::zipf(std::uint64_t n, double exponent) { return ZipfSampler(n, exponent)(*this); }

}  // namespace headroom
