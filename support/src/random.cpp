#include "course/random.h"

#include "course/device_random.h"
#include "course/parallel.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace course {

namespace {
// FNV-1a: stable across compilers and runs, unlike std::hash.
std::uint64_t hash_salt(std::string_view salt) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : salt) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// splitmix64 finaliser: spreads nearby seeds far apart.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

bool parse_seed(std::string_view text, std::uint64_t& seed) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return false;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  seed = value;
  return true;
}

std::uint64_t run_seed() {
  static const std::uint64_t seed = [] {
    std::uint64_t value = 0;
    const char* env = std::getenv("COURSE_SEED");
    if (env != nullptr && parse_seed(env, value)) return value;
    if (env != nullptr) std::fprintf(stderr, "COURSE_SEED=%s is not a number; drawing one\n", env);
    std::random_device device;
    value = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    return value;
  }();
  return seed;
}

std::mt19937_64 make_rng(std::uint64_t seed, std::string_view salt) {
  return std::mt19937_64(mix(seed ^ hash_salt(salt)));
}

std::mt19937_64 make_rng(std::string_view salt) { return make_rng(run_seed(), salt); }

// Each element is a hash of (a seed drawn from rng, its index), as on the device
// (course/device_random.h): the cores share the indices, and the values do not depend on how
// many there are.
namespace {
constexpr std::size_t kPerThread = 1 << 18;

// lo + the high 32 bits of hash scaled to the hi - lo + 1 values of [lo, hi] (multiply-high:
// the bias is below 2^-32 for any range).
std::uint64_t offset_in(std::uint64_t hash, std::uint64_t values) {
  return ((hash >> 32) * values) >> 32;
}
}  // namespace

std::vector<float> random_floats(std::size_t n, float lo, float hi, std::mt19937_64& rng) {
  const std::uint64_t seed = rng();
  std::vector<float> values(n);
  parallel_chunks(n, kPerThread, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) values[i] = hashed_float(i, seed, lo, hi);
  });
  return values;
}

std::vector<int> random_ints(std::size_t n, int lo, int hi, std::mt19937_64& rng) {
  const std::uint64_t seed = rng();
  const std::uint64_t span = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo) + 1;
  std::vector<int> values(n);
  parallel_chunks(n, kPerThread, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      values[i] = static_cast<int>(lo + static_cast<std::int64_t>(offset_in(hash_index(i, seed), span)));
  });
  return values;
}

std::vector<unsigned> random_uints(std::size_t n, unsigned lo, unsigned hi, std::mt19937_64& rng) {
  const std::uint64_t seed = rng();
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  std::vector<unsigned> values(n);
  parallel_chunks(n, kPerThread, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      values[i] = lo + static_cast<unsigned>(offset_in(hash_index(i, seed), span));
  });
  return values;
}

std::vector<unsigned> random_bin_values(std::size_t n, int num_bins, bool skewed,
                                        std::mt19937_64& rng) {
  const auto top = static_cast<unsigned>(num_bins - 1);
  auto values = random_uints(n, 0u, top, rng);
  if (skewed) {
    const unsigned hot = std::uniform_int_distribution<unsigned>(0, top)(rng);
    std::uniform_int_distribution<int> tenth(0, 9);
    for (auto& v : values)
      if (tenth(rng) != 0) v = hot;
  }
  return values;
}

}  // namespace course
