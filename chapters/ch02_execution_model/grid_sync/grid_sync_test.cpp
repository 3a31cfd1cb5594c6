#include "grid_sync.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "course/device.h"
#include "course/testing.h"
#include "grid_sync_baseline.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

enum class Launcher { PerSweep, GridSync };

const char* name_of(Launcher which) {
  return which == Launcher::PerSweep ? "jacobi_per_sweep" : "jacobi_grid_sync";
}

// The sweeps on the CPU, in the same int arithmetic: bit for bit what the GPU must give.
std::vector<int> host_jacobi(std::vector<int> u, int sweeps) {
  const std::size_t n = u.size();
  std::vector<int> next(u);
  for (int s = 0; s < sweeps; ++s) {
    for (std::size_t i = 1; i + 1 < n; ++i) next[i] = (u[i - 1] + 2 * u[i] + u[i + 1]) / 4;
    u.swap(next);
  }
  return u;
}

std::vector<int> temperatures(std::size_t n, std::mt19937_64& rng) {
  return course::random_ints(n, 0, kJacobiValueLimit - 1, rng);
}

// Most threads any cooperative grid can have here, whatever the kernel: every thread resident.
long long resident_threads() { return course::testing::resident_thread_capacity(); }

// Calls the launcher; a cooperative launch the runtime refused for its size becomes a failure
// that says so and how to size the grid (other errors propagate as they are).
::testing::AssertionResult launched(Launcher which, const int* in, int n, int sweeps, int* out,
                                    int* scratch, cudaStream_t stream) {
  try {
    if (which == Launcher::PerSweep)
      jacobi_per_sweep(in, n, sweeps, out, scratch, stream);
    else
      jacobi_grid_sync(in, n, sweeps, out, scratch, stream);
  } catch (const course::CudaError& error) {
    if (error.code() != cudaErrorCooperativeLaunchTooLarge) throw;
    (void)cudaGetLastError();
    return ::testing::AssertionFailure()
           << "cooperative launch too large: " << name_of(which) << " (n = " << n
           << ", sweeps = " << sweeps << ") asked for more blocks than the GPU can hold at "
           << "once, and the runtime refused the launch:\n  " << error.what()
           << "\nEvery block of a cooperative launch must be resident at the same time. Size "
           << "the grid as cudaOccupancyMaxActiveBlocksPerMultiprocessor(kernel, block, smem) "
           << "x the SM count (" << course::sm_count() << " SMs here, " << resident_threads()
           << " threads at most whatever the kernel) and let grid-stride loops cover n.";
  }
  return ::testing::AssertionSuccess();
}

// One call on fresh guarded buffers: out, the guards of out and scratch, the input.
void check_sweeps(Launcher which, std::size_t n, int sweeps, const std::string& what) {
  auto rng = course::testing::case_rng();
  const std::vector<int> values = temperatures(n, rng);
  GuardedInput<int> in(values);
  GuardedOutput<int> out(n), scratch(n);
  ASSERT_TRUE(launched(which, in.data(), static_cast<int>(n), sweeps, out.data(),
                       scratch.data(), nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string label = std::string("out of ") + name_of(which) + " after " +
                            std::to_string(sweeps) + " sweeps" + what;
  EXPECT_TRUE(course::testing::equal(host_jacobi(values, sweeps), out.download(), {{}, label}));
  EXPECT_TRUE(out.guards_intact("out (n ints)"));
  EXPECT_TRUE(scratch.guards_intact("scratch (n ints)"));
  EXPECT_TRUE(in.unchanged("in"));
}

struct Case {
  Launcher which;
  std::size_t n;
  int sweeps;
};

class Jacobi : public ::testing::TestWithParam<Case> {};

TEST_P(Jacobi, MatchesTheCpu) {
  check_sweeps(GetParam().which, GetParam().n, GetParam().sweeps, "");
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.which == Launcher::PerSweep ? "per_sweep" : "grid_sync") +
         "_n_" + std::to_string(info.param.n) + "_sweeps_" + std::to_string(info.param.sweeps);
}

// Both launchers, every size, and sweep counts that end in out after an even and an odd
// number of swaps (0 is a copy; 100 is many barriers).
std::vector<Case> every_case(const std::vector<std::size_t>& sizes) {
  std::vector<Case> cases;
  for (const Launcher which : {Launcher::PerSweep, Launcher::GridSync})
    for (const std::size_t n : sizes)
      for (const int sweeps : {0, 1, 2, 17, 100}) cases.push_back({which, n, sweeps});
  return cases;
}

// n = 2 and 3: no inner point, and one. The large sizes hold more elements than an H100 or an
// H200 has resident threads (132 SMs x 2048), so only a grid-stride cooperative kernel covers
// them there; the residency case below does the same on any GPU.
INSTANTIATE_TEST_SUITE_P(Small, Jacobi,
                         ::testing::ValuesIn(every_case(course::testing::small_sizes({2, 3}))),
                         case_name);
INSTANTIATE_TEST_SUITE_P(
    Large, Jacobi,
    ::testing::ValuesIn(every_case(course::testing::large_sizes({(std::size_t{1} << 20) + 3}))),
    case_name);

// Values at both ends of the range, side by side: the largest sums an inner point can have, and
// steps a float computation (24-bit mantissa) would round.
void check_extreme_values(Launcher which) {
  const std::size_t n = 4099;
  auto rng = course::testing::case_rng();
  std::vector<int> values = course::random_ints(n, 0, 1, rng);
  for (int& v : values) v = v == 1 ? kJacobiValueLimit - 1 : 0;
  values[n / 2 - 1] = values[n / 2] = values[n / 2 + 1] = kJacobiValueLimit - 1;
  GuardedInput<int> in(values);
  GuardedOutput<int> out(n), scratch(n);
  ASSERT_TRUE(launched(which, in.data(), static_cast<int>(n), 33, out.data(), scratch.data(),
                       nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(host_jacobi(values, 33), out.download(),
                                     {{}, std::string("out of ") + name_of(which)}));
}

TEST(JacobiEdge, PerSweepExtremeValues) { check_extreme_values(Launcher::PerSweep); }
TEST(JacobiEdge, GridSyncExtremeValues) { check_extreme_values(Launcher::GridSync); }

// Same buffers, new temperatures and a new sweep count each call; scratch keeps what the call
// before left in it. A result remembered by pointer or by size fails the second call.
void call_again(Launcher which) {
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(n), out(n), scratch(n);
  scratch.fill_bytes(course::kPoisonByte);
  int sweeps = 17;
  for (const std::string call : {"first call", "second call", "third call"}) {
    const std::vector<int> values = temperatures(n, rng);
    in.upload(values);
    out.fill_bytes(course::kPoisonByte);
    ASSERT_TRUE(launched(which, in.data(), n, sweeps, out.data(), scratch.data(), nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(host_jacobi(values, sweeps), out.download(),
                                       {{}, "out after the " + call}));
    sweeps = sweeps == 17 ? 6 : 17;  // an even count too: the other buffer ends the swaps
  }
}

TEST(JacobiEdge, PerSweepCallsAgainWithNewInputs) { call_again(Launcher::PerSweep); }
TEST(JacobiEdge, GridSyncCallsAgainWithNewInputs) { call_again(Launcher::GridSync); }

// keeps_to_stream holds the stream shut while the launcher returns: a kernel or a copy put
// anywhere else (the default stream, a stream of its own, the host) writes out or scratch
// meanwhile, and a launcher that waits for the device is reported.
void keeps_to_its_stream(Launcher which) {
  const int n = 300001;
  const int sweeps = 9;
  auto rng = course::testing::case_rng();
  const std::vector<int> values = temperatures(n, rng);
  GuardedInput<int> in(values);
  auto out = course::testing::poisoned_output<int>(n);
  auto scratch = course::testing::poisoned_output<int>(n);
  ::testing::AssertionResult ran = ::testing::AssertionSuccess();
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) {
        ran = launched(which, in.data(), n, sweeps, out.data(), scratch.data(), s);
      },
      {course::testing::watched(out, "out"), course::testing::watched(scratch, "scratch")}));
  ASSERT_TRUE(ran);
  EXPECT_TRUE(course::testing::equal(host_jacobi(values, sweeps), out.download(), {{}, "out"}));
}

TEST(JacobiEdge, PerSweepRunsOnTheGivenStream) { keeps_to_its_stream(Launcher::PerSweep); }
TEST(JacobiEdge, GridSyncRunsOnTheGivenStream) { keeps_to_its_stream(Launcher::GridSync); }

// The launchers' work recorded into a graph instead of run: the graph shows the launches
// themselves, which the results cannot. A cooperative launch per sweep (or ordinary launches)
// in jacobi_grid_sync gives the same temperatures with no grid barrier ever reached; one kernel
// running several sweeps in jacobi_per_sweep is no longer a launch per sweep. One ordinary call
// first does the one-time set-up (loading the kernels, occupancy queries) outside the recording.
::testing::AssertionResult recorded_launches(Launcher which, int sweeps,
                                             const std::function<::testing::AssertionResult(
                                                 const course::testing::RecordedGraph&)>& check) {
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(temperatures(n, rng)), out(n), scratch(n);
  course::Stream stream;
  if (auto ran = launched(which, in.data(), n, sweeps, out.data(), scratch.data(), stream); !ran)
    return ran;
  stream.synchronize();
  course::testing::RecordedGraph recorded(stream, [&](cudaStream_t s) {
    if (which == Launcher::PerSweep)
      jacobi_per_sweep(in.data(), n, sweeps, out.data(), scratch.data(), s);
    else
      jacobi_grid_sync(in.data(), n, sweeps, out.data(), scratch.data(), s);
  });
  if (!recorded.problem().empty())
    return ::testing::AssertionFailure() << name_of(which) << ": " << recorded.problem();
  return check(recorded) << " (" << name_of(which) << ", n = " << n << ", sweeps = " << sweeps
                         << ")";
}

TEST(JacobiEdge, GridSyncIsOneCooperativeLaunch) {
  for (const int sweeps : {0, 1, 17}) {
    const auto verdict = recorded_launches(Launcher::GridSync, sweeps, [](const auto& recorded) {
      const auto& launches = recorded.launches();
      if (launches.size() == 1 && launches[0].cooperative &&
          recorded.memsets() + recorded.copies() + recorded.others() == 0)
        return ::testing::AssertionSuccess();
      auto failure = ::testing::AssertionFailure()
                     << "expected exactly one cooperative kernel launch and nothing else, "
                        "whatever the sweep count: every sweep runs in that one grid, with "
                        "grid.sync() between them; found "
                     << recorded.census();
      if (!launches.empty())
        failure << "; the first: " << course::testing::describe(launches.front());
      return failure;
    });
    EXPECT_TRUE(verdict);
  }
}

TEST(JacobiEdge, PerSweepLaunchesAKernelPerSweep) {
  for (const int sweeps : {1, 2, 17}) {
    const auto verdict = recorded_launches(Launcher::PerSweep, sweeps, [&](const auto& recorded) {
      const auto& launches = recorded.launches();
      const bool any_cooperative = std::any_of(launches.begin(), launches.end(),
                                               [](const auto& l) { return l.cooperative; });
      if (recorded.kernels() == sweeps && !any_cooperative)
        return ::testing::AssertionSuccess();
      return ::testing::AssertionFailure()
             << "expected " << sweeps << " ordinary kernel launches, one per sweep: the end "
             << "of each kernel is the barrier before the next sweep; found "
             << recorded.census() << (any_cooperative ? ", some of them cooperative" : "");
    });
    EXPECT_TRUE(verdict);
  }
}

// What an oversized cooperative grid does, shown on the course's own probe kernel: the runtime
// refuses the launch at once (cudaErrorCooperativeLaunchTooLarge) and the check names both
// numbers; it never starts blocks that would wait forever at the barrier. At the largest
// resident grid the probe runs and its barrier holds. Then yours, on more elements than the GPU
// has resident threads: only an occupancy-sized grid with grid-stride loops can do them. Both
// sizes come from the device's own limits, never from constants: 2 x its resident threads + 3
// catches a grid of one block per blockDim elements, 32 x + 3 one sized from n at up to 31
// elements per thread (which 2 x, and on an H100 even the Large sizes, could let fit).
TEST(GridSyncResidency, OversizedGridIsRefusedAndYoursFits) {
  const int most = rotate_probe_max_blocks();
  ASSERT_GT(most, 0) << "the occupancy API fits no block of the course's probe kernel";
  course::DeviceBuffer<int> ids(most + 1), rotated(most + 1);
  try {
    rotate_probe(most + 1, ids.data(), rotated.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    ADD_FAILURE() << "a cooperative launch of " << most + 1 << " blocks, one more than the "
                  << most << " the occupancy API says fit at once, was not refused";
  } catch (const course::CudaError& error) {
    EXPECT_EQ(error.code(), cudaErrorCooperativeLaunchTooLarge) << error.what();
    const std::string message = error.what();
    const std::string numbers = "too many blocks for a cooperative launch (" +
                                std::to_string(most + 1) + " > max resident " +
                                std::to_string(most);
    EXPECT_NE(message.find("cudaErrorCooperativeLaunchTooLarge"), std::string::npos) << message;
    EXPECT_NE(message.find(numbers), std::string::npos) << message;
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the refused launch left its error behind";

  rotated.fill_bytes(course::kPoisonByte);
  rotate_probe(most, ids.data(), rotated.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> want(most + 1, -1);  // the last entry is never written: still the poison
  for (int b = 0; b < most; ++b) want[b] = (b + 1) % most;
  EXPECT_TRUE(course::testing::equal(want, rotated.download(), {{}, "the probe's rotated ids"}));

  const long long threads = resident_threads();
  check_sweeps(Launcher::GridSync, static_cast<std::size_t>(2 * threads + 3), 5,
               " on n = 2 x the " + std::to_string(threads) + " threads this GPU can hold + 3");
  check_sweeps(Launcher::GridSync, course::testing::elements_beyond_residency(32), 5,
               " on n = 32 x the " + std::to_string(threads) + " threads this GPU can hold + 3");
}

}  // namespace
