// Seeded random inputs. One run seed (the grader passes COURSE_SEED; without it a fresh one is
// drawn and printed) is mixed with a per-case salt, usually the test's name, so every case is
// reproducible on its own and independent of the order the cases run in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace course {

// The seed of this process: COURSE_SEED if set (decimal or 0x hex), else drawn once.
std::uint64_t run_seed();

// Parses a seed; returns false on anything but a whole number that fits 64 bits.
bool parse_seed(std::string_view text, std::uint64_t& seed);

// A generator for one case: run_seed() mixed with a hash of salt.
std::mt19937_64 make_rng(std::string_view salt);
std::mt19937_64 make_rng(std::uint64_t seed, std::string_view salt);

// n values in [lo, hi) (floats) or [lo, hi] (integers). Each takes one draw from rng as a seed
// and makes element i from (seed, i) alone (course/device_random.h's hash), on all the host's
// cores for large n: the same rng state gives the same values however many there are.
std::vector<float> random_floats(std::size_t n, float lo, float hi, std::mt19937_64& rng);
std::vector<int> random_ints(std::size_t n, int lo, int hi, std::mt19937_64& rng);
std::vector<unsigned> random_uints(std::size_t n, unsigned lo, unsigned hi, std::mt19937_64& rng);

// n histogram inputs in [0, num_bins): uniform, or (skewed) nine in ten equal to one hot bin
// drawn from rng and the rest uniform, so that one bin's atomics contend.
std::vector<unsigned> random_bin_values(std::size_t n, int num_bins, bool skewed,
                                        std::mt19937_64& rng);

}  // namespace course
