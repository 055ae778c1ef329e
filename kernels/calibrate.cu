// headroom-calibrate: measures one GPU and writes a headroom GPU profile (`source: measured`) and
// its measurement CSV (sim/latency/measurements.hpp), which `headroom fit` turns into fitted
// step-latency coefficients. One source for both vendors: nvcc builds it against the CUDA
// runtime, hipcc against the HIP runtime (gpu_runtime.hpp). `--help` lists every measurement.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "catalogue_shapes.hpp"
#include "gpu_runtime.hpp"
#include "paged_attention.cuh"
#include "stream_kernels.cuh"
#include "vendor_gemm.cuh"

namespace {

// Exit codes: 0 profile written, 1 a runtime call failed mid-measurement, 2 bad arguments,
// 3 no GPU (no device, or no driver): nothing is written.
constexpr int kExitFailed = 1, kExitUsage = 2, kExitNoGpu = 3;
constexpr std::size_t MiB = std::size_t{1} << 20, GiB = std::size_t{1} << 30;

const char* kHelp = R"(headroom-calibrate: measure this GPU and write a headroom GPU profile

usage: headroom-calibrate [-o PROFILE.yaml] [--name NAME] [--device N] [--quick]

  -o, --output FILE  the profile to write (default: gpu-profile.yaml); the measurements go to
                     FILE's stem + ".measurements.csv" beside it, written only once every
                     measurement has succeeded (under a temporary name, then renamed)
  --name NAME        the profile's name (default: the device name, lower-case, dashes)
  --device N         the device to measure (default: 0)
  --quick            fewer sizes and shapes (about a minute instead of a few)
  -h, --help         this text

What it measures, in this order (run it on an idle GPU: other processes' memory counts as context):
  device             name, totalGlobalMem (capacity_bytes), driver and runtime versions
  context            free memory right after the context is created and the kernels are loaded
                     (free_at_start_bytes); capacity - free = context_bytes
  granularity        the free-memory drop of one )" GPU_MALLOC_NAME R"( of 64 MiB + 1 B, less 64 MiB
                     (granularity_bytes: the driver's allocation granularity)
  largest alloc      binary search, to the granularity, for the largest single allocation that
                     succeeds (largest_allocation_bytes)
  malloc / free      median host time of )" GPU_MALLOC_NAME R"( and of its free, for 1 MiB ... 8 GiB
                     (CSV kinds malloc, free; bytes = the size)
  release cached     time to free every segment of a cache of 20 MiB segments (1, 4, 16 GiB),
                     after a device synchronize: what PyTorch's empty_cache() or its OOM retry
                     (release_cached_blocks) costs (CSV kind release_cached)
  HBM bandwidth      STREAM copy and triad kernels on 64 MiB ... 1 GiB arrays (CSV kind stream);
                     the best rate is the profile's bandwidth_bytes_per_s
  GEMM               bf16 Y = X W^T for every projection N x K of the catalogue models (tp 1),
                     tokens M = 1 ... 16384, with the vendor BLAS found at build time (cuBLAS,
                     rocBLAS) or the project's own kernel (CSV kind gemm); the best rate is the
                     profile's dense_bf16_flops_per_s. dense_fp8_flops_per_s is twice that on GPUs
                     with FP8 tensor cores (sm_89+, gfx94x+): a datasheet ratio, not measured.
  paged attention    the project's own decode kernel (gather K/V blocks of 16 tokens, dot,
                     softmax, weighted sum) for each catalogue head shape, batch 1 ... 256,
                     context 512 ... 32768 (CSV kind attention)
Every kernel time is the median of several runs after a warm-up, timed with GPU events.
Then: `headroom fit PROFILE.yaml` fits the latency coefficients to these measurements.

Exit codes: 0 written, 1 a runtime call failed, 2 bad arguments, 3 no GPU (nothing written).
)";

struct Options {
  std::string output = "gpu-profile.yaml";
  std::string name;
  int device = 0;
  bool quick = false;
  std::string command;
};

struct Failure {
  std::string what;
};

void check(gpuError_t e, const char* call) {
  if (e != gpuSuccess) throw Failure{std::string(call) + ": " + gpuGetErrorString(e)};
}

struct Row {
  std::string kind, label;
  double flops, bytes, rows, seconds;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Median GPU time of `launch` over `reps` runs after one warm-up run, in seconds.
double time_kernel(const std::function<void()>& launch, int reps) {
  gpuEvent_t start, stop;
  check(gpuEventCreate(&start), "event create");
  check(gpuEventCreate(&stop), "event create");
  launch();
  check(gpuDeviceSynchronize(), "warm-up");
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    check(gpuEventRecord(start), "event record");
    launch();
    check(gpuEventRecord(stop), "event record");
    check(gpuEventSynchronize(stop), "kernel");
    float ms = 0;
    check(gpuEventElapsedTime(&ms, start, stop), "event elapsed");
    times.push_back(ms * 1e-3);
  }
  check(gpuGetLastError(), "kernel launch");
  check(gpuEventDestroy(start), "event destroy");
  check(gpuEventDestroy(stop), "event destroy");
  return median(times);
}

double host_seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::size_t free_bytes() {
  std::size_t free = 0, total = 0;
  check(gpuMemGetInfo(&free, &total), "memory info");
  return free;
}

void* try_malloc(std::size_t bytes) {
  void* p = nullptr;
  if (gpuMalloc(&p, bytes) != gpuSuccess) {
    (void)gpuGetLastError();  // clear the error of the failed allocation; it is not sticky
    return nullptr;
  }
  return p;
}

std::string size_label(std::size_t bytes) {
  char buf[64];
  if (bytes >= GiB && bytes % GiB == 0)
    std::snprintf(buf, sizeof buf, "%zu GiB", bytes / GiB);
  else
    std::snprintf(buf, sizeof buf, "%zu MiB", bytes / MiB);
  return buf;
}

std::string profile_name(const std::string& device) {
  std::string out;
  for (char c : device) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(l)))
      out += l;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "measured-gpu" : out;
}

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw Failure{"cannot write " + tmp};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Failure{"cannot rename " + tmp + " to " + path};
}

class Calibration {
 public:
  Calibration(const Options& o, const gpuDeviceProp& prop) : o_(o), prop_(prop) {}

  void run() {
    memory_facts();
    allocation_latency();
    release_cached();
    bandwidth();
    gemm();
    attention();
  }
  std::string profile_yaml(const std::string& measurements_file) const;
  std::string measurements_csv() const;

 private:
  void add(const std::string& kind, const std::string& label, double flops, double bytes, double rows, double s) {
    rows_.push_back({kind, label, flops, bytes, rows, s});
  }
  void progress(const char* what) const { std::fprintf(stderr, "headroom-calibrate: %s\n", what); }

  void memory_facts();
  void allocation_latency();
  void release_cached();
  void bandwidth();
  void gemm();
  void attention();

  const Options& o_;
  const gpuDeviceProp& prop_;
  std::vector<Row> rows_;
  std::size_t free_at_start_ = 0, granularity_ = 0, largest_ = 0;
  double best_bandwidth_ = 0, best_flops_ = 0;
};

void Calibration::memory_facts() {
  progress("memory: context, granularity, largest allocation");
  // Load the module (lazy loading defers it to the first launch) so the context is complete.
  fill_bf16<<<1, 32>>>(nullptr, 0, 0, 1.0f);
  check(gpuDeviceSynchronize(), "first kernel");
  free_at_start_ = free_bytes();

  const std::size_t probe = 64 * MiB + 1;
  const std::size_t before = free_bytes();
  void* p = try_malloc(probe);
  if (!p) throw Failure{"cannot allocate 64 MiB for the granularity probe"};
  const std::size_t after = free_bytes();
  check(gpuFree(p), "free");
  granularity_ = before > after && before - after > 64 * MiB ? before - after - 64 * MiB : 0;
  if (granularity_ == 0) throw Failure{"the free-memory figure did not move by more than 64 MiB for 64 MiB + 1 B"};

  // Largest single allocation: [lo, hi) in granularity steps, lo known to succeed.
  std::size_t lo = 0, hi = free_bytes() / granularity_ + 1;
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (void* q = try_malloc(mid * granularity_)) {
      check(gpuFree(q), "free");
      lo = mid;
    } else {
      hi = mid;
    }
  }
  largest_ = lo * granularity_;
}

void Calibration::allocation_latency() {
  progress("malloc and free latency");
  std::vector<std::size_t> sizes = {1 * MiB, 2 * MiB, 20 * MiB, 128 * MiB, 512 * MiB, 1 * GiB, 2 * GiB, 4 * GiB, 8 * GiB};
  if (o_.quick) sizes = {1 * MiB, 20 * MiB, 512 * MiB, 2 * GiB};
  for (std::size_t bytes : sizes) {
    if (bytes > free_bytes() / 2) break;
    std::vector<double> mallocs, frees;
    for (int r = 0; r < (o_.quick ? 3 : 7); ++r) {
      void* p = nullptr;
      mallocs.push_back(host_seconds([&] { check(gpuMalloc(&p, bytes), GPU_MALLOC_NAME); }));
      frees.push_back(host_seconds([&] { check(gpuFree(p), "free"); }));
    }
    add("malloc", size_label(bytes), 0, static_cast<double>(bytes), 0, median(mallocs));
    add("free", size_label(bytes), 0, static_cast<double>(bytes), 0, median(frees));
  }
}

void Calibration::release_cached() {
  progress("releasing a cache of 20 MiB segments");
  const std::size_t segment = 20 * MiB;  // PyTorch kLargeBuffer, the usual large-pool segment
  for (std::size_t total : {1 * GiB, 4 * GiB, 16 * GiB}) {
    if (o_.quick && total > 1 * GiB) break;
    if (total > free_bytes() / 2) break;
    std::vector<void*> segments(total / segment);
    for (void*& s : segments) check(gpuMalloc(&s, segment), GPU_MALLOC_NAME);
    const double seconds = host_seconds([&] {
      check(gpuDeviceSynchronize(), "synchronize");
      for (void* s : segments) check(gpuFree(s), "free");
    });
    char label[64];
    std::snprintf(label, sizeof label, "%zu segments of 20 MiB", segments.size());
    add("release_cached", label, 0, static_cast<double>(segments.size() * segment), 0, seconds);
  }
}

void Calibration::bandwidth() {
  progress("HBM bandwidth: copy and triad");
  const int blocks = prop_.multiProcessorCount * 8, threads = 256;
  for (std::size_t bytes : {64 * MiB, 256 * MiB, 1 * GiB}) {
    if (3 * bytes > free_bytes() / 2) break;
    float4 *a = nullptr, *b = nullptr, *c = nullptr;
    check(gpuMalloc(&a, bytes), GPU_MALLOC_NAME);
    check(gpuMalloc(&b, bytes), GPU_MALLOC_NAME);
    check(gpuMalloc(&c, bytes), GPU_MALLOC_NAME);
    check(gpuMemset(a, 0, bytes), "memset");
    check(gpuMemset(b, 0, bytes), "memset");
    check(gpuMemset(c, 0, bytes), "memset");
    const std::size_t n = bytes / sizeof(float4);
    const int reps = o_.quick ? 5 : 15;
    const double copy = time_kernel([&] { stream_copy<<<blocks, threads>>>(a, b, n); }, reps);
    const double triad = time_kernel([&] { stream_triad<<<blocks, threads>>>(a, b, c, 3.0f, n); }, reps);
    add("stream", "copy " + size_label(bytes), 0, 2.0 * bytes, 0, copy);
    add("stream", "triad " + size_label(bytes), 0, 3.0 * bytes, 0, triad);
    best_bandwidth_ = std::max({best_bandwidth_, 2.0 * bytes / copy, 3.0 * bytes / triad});
    check(gpuFree(a), "free");
    check(gpuFree(b), "free");
    check(gpuFree(c), "free");
  }
}

void Calibration::gemm() {
  Gemm blas;
  if (!blas.ok()) throw Failure{std::string("cannot initialise ") + Gemm::name()};
  std::fprintf(stderr, "headroom-calibrate: GEMM with %s, %zu catalogue shapes\n", Gemm::name(),
               sizeof kCatalogueGemms / sizeof kCatalogueGemms[0]);
  std::vector<long long> tokens = {1, 8, 32, 128, 512, 2048, 8192, 16384};
  if (o_.quick) tokens = {1, 64, 1024, 8192};
  const std::size_t budget = free_bytes() / 2;
  for (const CatalogueGemm& g : kCatalogueGemms) {
    for (long long m : tokens) {
      const std::size_t elements = static_cast<std::size_t>(m * g.k + g.n * g.k + m * g.n);
      if (2 * elements > budget) continue;  // would not fit beside the context: skipped
      bf16_bits *x = nullptr, *w = nullptr, *y = nullptr;
      check(gpuMalloc(&x, 2 * static_cast<std::size_t>(m * g.k)), GPU_MALLOC_NAME);
      check(gpuMalloc(&w, 2 * static_cast<std::size_t>(g.n * g.k)), GPU_MALLOC_NAME);
      check(gpuMalloc(&y, 2 * static_cast<std::size_t>(m * g.n)), GPU_MALLOC_NAME);
      const int blocks = prop_.multiProcessorCount * 4;
      fill_bf16<<<blocks, 256>>>(x, static_cast<std::size_t>(m * g.k), 1u, 1.0f);
      fill_bf16<<<blocks, 256>>>(w, static_cast<std::size_t>(g.n * g.k), 2u, 0.02f);
      bool ok = true;
      const double flops = 2.0 * m * g.n * g.k;
      const int reps = flops > 1e12 ? 3 : (o_.quick ? 5 : 10);
      const double s = time_kernel([&] { ok = blas.run(x, w, y, static_cast<int>(m), static_cast<int>(g.n),
                                                       static_cast<int>(g.k)) && ok; },
                                   reps);
      if (!ok) throw Failure{std::string(Gemm::name()) + " GEMM failed"};
      char label[160];
      std::snprintf(label, sizeof label, "%s m=%lld n=%lld k=%lld", g.what, m, g.n, g.k);
      add("gemm", label, flops, 2.0 * static_cast<double>(elements), static_cast<double>(m), s);
      best_flops_ = std::max(best_flops_, flops / s);
      check(gpuFree(x), "free");
      check(gpuFree(w), "free");
      check(gpuFree(y), "free");
    }
  }
}

void Calibration::attention() {
  progress("paged-attention decode");
  constexpr int kBlock = 16;  // tokens per KV block, vLLM's default block_size
  std::vector<int> batches = {1, 8, 32, 128, 256}, contexts = {512, 2048, 8192, 32768};
  if (o_.quick) batches = {1, 32, 256}, contexts = {512, 8192};
  const std::size_t budget = free_bytes() / 2;
  for (const CatalogueHeads& h : kCatalogueHeads) {
    if (h.head_dim % 32 != 0 || h.head_dim > paged_attention::kMaxHeadDim) continue;
    for (int batch : batches)
      for (int context : contexts) {
        const std::size_t blocks_per_seq = (context + kBlock - 1) / kBlock;
        const std::size_t blocks = batch * blocks_per_seq;
        const std::size_t cache = blocks * kBlock * h.kv_heads * h.head_dim;  // elements of K (and of V)
        if (4 * cache > budget) continue;
        bf16_bits *k = nullptr, *v = nullptr, *q = nullptr, *out = nullptr;
        int *table = nullptr, *lens = nullptr;
        const std::size_t qn = static_cast<std::size_t>(batch) * h.q_heads * h.head_dim;
        check(gpuMalloc(&k, 2 * cache), GPU_MALLOC_NAME);
        check(gpuMalloc(&v, 2 * cache), GPU_MALLOC_NAME);
        check(gpuMalloc(&q, 2 * qn), GPU_MALLOC_NAME);
        check(gpuMalloc(&out, 2 * qn), GPU_MALLOC_NAME);
        check(gpuMalloc(&table, sizeof(int) * blocks), GPU_MALLOC_NAME);
        check(gpuMalloc(&lens, sizeof(int) * batch), GPU_MALLOC_NAME);
        // Blocks in a scrambled order, as a paged cache hands them out after churn.
        std::vector<int> host_table(blocks), host_lens(batch, context);
        for (std::size_t i = 0; i < blocks; ++i) host_table[i] = static_cast<int>((i * 7919) % blocks);
        if (std::gcd(blocks, std::size_t{7919}) != 1)
          for (std::size_t i = 0; i < blocks; ++i) host_table[i] = static_cast<int>(i);
        check(gpuMemcpyHostToDevice(table, host_table.data(), sizeof(int) * blocks), "copy");
        check(gpuMemcpyHostToDevice(lens, host_lens.data(), sizeof(int) * batch), "copy");
        const int fill_blocks = prop_.multiProcessorCount * 4;
        fill_bf16<<<fill_blocks, 256>>>(k, cache, 3u, 1.0f);
        fill_bf16<<<fill_blocks, 256>>>(v, cache, 4u, 1.0f);
        fill_bf16<<<fill_blocks, 256>>>(q, qn, 5u, 1.0f);
        const float scale = 1.0f / std::sqrt(static_cast<float>(h.head_dim));
        const dim3 grid(h.q_heads, batch);
        const double s = time_kernel(
            [&] {
              paged_attention::decode<<<grid, paged_attention::kThreads>>>(
                  q, k, v, table, lens, out, h.q_heads, h.kv_heads, h.head_dim, kBlock,
                  static_cast<int>(blocks_per_seq), scale);
            },
            o_.quick ? 5 : 10);
        // FLOPs: a multiply-add per element of q·k and of p·v for every query head and token.
        const double flops = 4.0 * batch * context * h.q_heads * h.head_dim;
        const double bytes = 2.0 * 2.0 * static_cast<double>(batch) * context * h.kv_heads * h.head_dim;
        char label[160];
        std::snprintf(label, sizeof label, "%s heads=%d/%d d=%d batch=%d context=%d", h.what, h.q_heads, h.kv_heads,
                      h.head_dim, batch, context);
        add("attention", label, flops, bytes, 0, s);
        for (void* p : {static_cast<void*>(k), static_cast<void*>(v), static_cast<void*>(q),
                        static_cast<void*>(out), static_cast<void*>(table), static_cast<void*>(lens)})
          check(gpuFree(p), "free");
      }
  }
}

std::string Calibration::measurements_csv() const {
  std::string out = "# headroom measurements v1\n";
  out += "# written by headroom-calibrate on " + std::string(prop_.name) + "; GEMM: " + Gemm::name() + "\n";
  out += "kind,label,flops,bytes,rows,seconds\n";
  char line[512];
  for (const Row& r : rows_) {
    std::snprintf(line, sizeof line, "%s,%s,%.10e,%.10e,%.0f,%.6e\n", r.kind.c_str(), r.label.c_str(), r.flops,
                  r.bytes, r.rows, r.seconds);
    out += line;
  }
  return out;
}

bool has_fp8(const gpuDeviceProp& p) {
#if defined(__HIPCC__)
  const std::string arch = p.gcnArchName;  // CDNA3 (gfx94x) and later have FP8 matrix cores
  return arch.rfind("gfx94", 0) == 0 || arch.rfind("gfx95", 0) == 0;
#else
  return p.major * 10 + p.minor >= 89;  // Ada (sm_89) and Hopper (sm_90) and later
#endif
}

std::string Calibration::profile_yaml(const std::string& measurements_file) const {
  int driver = 0, runtime = 0;
  check(gpuDriverGetVersion(&driver), "driver version");
  check(gpuRuntimeGetVersion(&runtime), "runtime version");
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::size_t capacity = prop_.totalGlobalMem;
  char fp8[32] = "null";
  if (has_fp8(prop_)) std::snprintf(fp8, sizeof fp8, "%.6e", 2 * best_flops_);
  char buf[4096];
  std::snprintf(
      buf, sizeof buf,
      "# Measured by headroom-calibrate (kernels/); `headroom fit` fits the latency coefficients.\n"
      "name: %s\n"
      "vendor: %s\n"
      "source: measured\n"
      "source_note: %s\n"
      "memory:\n"
      "  capacity_bytes: %zu\n"
      "  context_bytes: %zu\n"
      "  granularity_bytes: %zu\n"
      "  free_at_start_bytes: %zu\n"
      "  largest_allocation_bytes: %zu\n"
      "bandwidth_bytes_per_s: %.6e\n"
      "dense_bf16_flops_per_s: %.6e\n"
      "dense_fp8_flops_per_s: %s\n"
      "latency:\n"
      "  fitted: false\n"
      "calibration:\n"
      "  command: %s\n"
      "  device: %s\n"
      "  runtime: %s\n"
      "  driver_version: \"%d\"\n"
      "  runtime_version: \"%d\"\n"
      "  date: \"%s\"\n"
      "  measurements: %s\n",
      yaml_quoted(o_.name.empty() ? profile_name(prop_.name) : o_.name).c_str(),
#if defined(__HIPCC__)
      "amd",
#else
      "nvidia",
#endif
      yaml_quoted(std::string("headroom-calibrate: bandwidth is the best copy/triad rate measured, dense_bf16 the "
                              "best GEMM rate (") +
                  Gemm::name() + "), dense_fp8 twice that where the GPU has FP8 tensor cores (not measured)")
          .c_str(),
      capacity, capacity - free_at_start_, granularity_, free_at_start_, largest_, best_bandwidth_, best_flops_,
      fp8, yaml_quoted(o_.command).c_str(),
      yaml_quoted(prop_.name).c_str(), GPU_RUNTIME_NAME, driver, runtime, date, yaml_quoted(measurements_file).c_str());
  return buf;
}

// "dir/name.yaml" -> "name.measurements.csv" (relative to the profile) and its full path.
std::pair<std::string, std::string> measurements_path(const std::string& profile) {
  const std::size_t slash = profile.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : profile.substr(0, slash + 1);
  std::string stem = profile.substr(dir.size());
  const std::size_t dot = stem.find_last_of('.');
  if (dot != std::string::npos && dot > 0) stem.resize(dot);
  const std::string file = stem + ".measurements.csv";
  return {file, dir + file};
}

int parse(int argc, char** argv, Options& o) {
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "headroom-calibrate: error: %s needs a value\n", flag);
        std::exit(kExitUsage);
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (a == "-o" || a == "--output") {
      o.output = value("--output");
    } else if (a == "--name") {
      o.name = value("--name");
    } else if (a == "--device") {
      const char* v = value("--device");
      char* end = nullptr;
      errno = 0;
      const long d = std::strtol(v, &end, 10);
      if (*v == '\0' || *end != '\0' || errno != 0 || d < 0 || d > 1024) {
        std::fprintf(stderr, "headroom-calibrate: error: --device: expected a device index, got '%s'\n", v);
        return kExitUsage;
      }
      o.device = static_cast<int>(d);
    } else if (a == "--quick") {
      o.quick = true;
    } else {
      std::fprintf(stderr, "headroom-calibrate: error: unknown argument '%s' (see --help)\n", a.c_str());
      return kExitUsage;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int rc = parse(argc, argv, o)) return rc;

  int count = 0;
  const gpuError_t e = gpuGetDeviceCount(&count);
  if (e != gpuSuccess || count == 0) {
    std::fprintf(stderr,
                 "headroom-calibrate: error: no GPU to measure (%s runtime: %s); nothing was measured and no profile "
                 "was written. Run it on a machine with a GPU and its driver.\n",
                 GPU_RUNTIME_NAME, e != gpuSuccess ? gpuGetErrorString(e) : "no devices");
    return kExitNoGpu;
  }
  if (o.device >= count) {
    std::fprintf(stderr, "headroom-calibrate: error: --device %d: this machine has %d device(s)\n", o.device, count);
    return kExitUsage;
  }
  try {
    check(gpuSetDevice(o.device), "set device");
    gpuDeviceProp prop;
    check(gpuGetDeviceProperties(&prop, o.device), "device properties");
    std::fprintf(stderr, "headroom-calibrate: device %d: %s, %zu bytes, %d multiprocessors (%s runtime)\n", o.device,
                 prop.name, static_cast<std::size_t>(prop.totalGlobalMem), prop.multiProcessorCount, GPU_RUNTIME_NAME);
    Calibration c(o, prop);
    c.run();
    const auto [csv_name, csv_path] = measurements_path(o.output);
    write_atomically(csv_path, c.measurements_csv());
    write_atomically(o.output, c.profile_yaml(csv_name));
    std::printf("wrote %s and %s\nnext: headroom fit %s\n", o.output.c_str(), csv_path.c_str(), o.output.c_str());
  } catch (const Failure& f) {
    std::fprintf(stderr, "headroom-calibrate: error: %s; no profile was written\n", f.what.c_str());
    return kExitFailed;
  }
  return 0;
}
