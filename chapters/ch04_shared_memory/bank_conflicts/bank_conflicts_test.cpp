#include "bank_conflicts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bank_conflicts_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

constexpr int kOutPerTile = kBankTileRows * kBankTileRows;

enum class Shape { Square, Rect };

struct Case {
  Shape shape;
  int tiles;
};

int cols_of(Shape s) { return s == Shape::Square ? kBankSquareCols : kBankRectCols; }

void launch(Shape s, const float* in, float* out, int tiles, cudaStream_t stream) {
  if (s == Shape::Square)
    bank_conflicts_square(in, out, tiles, stream);
  else
    bank_conflicts_rect(in, out, tiles, stream);
}

void check_gram(Shape s, int tiles, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  const int cols = cols_of(s);
  const std::size_t in_n = static_cast<std::size_t>(tiles) * kBankTileRows * cols;
  const std::size_t out_n = static_cast<std::size_t>(tiles) * kOutPerTile;
  GuardedInput<float> in(course::random_floats(in_n, -1.f, 1.f, rng));
  GuardedOutput<float> out(out_n);

  launch(s, in.data(), out.data(), tiles, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  // A sum of at most 64 products of values in [-1, 1]: float rounding stays near 1e-6; a
  // missing, doubled or wrong term is off by far more.
  EXPECT_TRUE(course::testing::close(
      bank_conflicts_reference(in.host(), tiles, cols), out.download(), {1e-4, 1e-5},
      {{static_cast<std::size_t>(tiles), static_cast<std::size_t>(kBankTileRows),
        static_cast<std::size_t>(kBankTileRows)},
       "out (tile, i, j)"}));
  EXPECT_TRUE(out.guards_intact("out (tiles * 1024)"));
  EXPECT_TRUE(in.unchanged("in"));
}

class BankConflicts : public ::testing::TestWithParam<Case> {};

TEST_P(BankConflicts, MatchesDoublePrecisionReference) {
  check_gram(GetParam().shape, GetParam().tiles, nullptr);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.shape == Shape::Square ? "square" : "rect") + "_tiles" +
         std::to_string(info.param.tiles);
}

// One tile, a few, and counts around the grid sizes a student might hard-code; Large goes past
// 65,535 tiles (the limit of gridDim.y and gridDim.z).
INSTANTIATE_TEST_SUITE_P(Small, BankConflicts,
                         ::testing::Values(Case{Shape::Square, 1}, Case{Shape::Square, 2},
                                           Case{Shape::Square, 7}, Case{Shape::Square, 33},
                                           Case{Shape::Square, 257}, Case{Shape::Rect, 1},
                                           Case{Shape::Rect, 3}, Case{Shape::Rect, 31},
                                           Case{Shape::Rect, 130}),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Large, BankConflicts,
                         ::testing::Values(Case{Shape::Square, 4099}, Case{Shape::Square, 65537},
                                           Case{Shape::Rect, 4097}, Case{Shape::Rect, 20011}),
                         case_name);

TEST(BankConflictsEdge, ZeroTilesWritesNothingThenOneTileWorks) {
  auto rng = course::testing::case_rng();
  GuardedInput<float> in(course::random_floats(kBankTileRows * kBankRectCols, -1.f, 1.f, rng));
  GuardedOutput<float> out(kOutPerTile);
  bank_conflicts_square(in.data(), out.data(), 0, nullptr);
  bank_conflicts_rect(in.data(), out.data(), 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(out, "out after calls with tiles = 0"));
  // The same buffers then take a real one-tile call, so doing nothing does not pass.
  bank_conflicts_rect(in.data(), out.data(), 1, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::close(bank_conflicts_reference(in.host(), 1, kBankRectCols),
                                     out.download(), {1e-4, 1e-5},
                                     {{32, 32}, "out after a one-tile call"}));
  EXPECT_TRUE(out.guards_intact("out after a one-tile call (1024)"));
}

const char* launcher_name(Shape s) {
  return s == Shape::Square ? "bank_conflicts_square" : "bank_conflicts_rect";
}

void check_keeps_to_stream(Shape s) {
  constexpr int kTiles = 300;
  auto rng = course::testing::case_rng();
  const int cols = cols_of(s);
  GuardedInput<float> in(course::random_floats(
      static_cast<std::size_t>(kTiles) * kBankTileRows * cols, -1.f, 1.f, rng));
  GuardedOutput<float> out(static_cast<std::size_t>(kTiles) * kOutPerTile);
  const std::string what = std::string(launcher_name(s)) + "'s out";
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t stream) { launch(s, in.data(), out.data(), kTiles, stream); },
      {course::testing::watched(out, what)}));
  EXPECT_TRUE(course::testing::close(bank_conflicts_reference(in.host(), kTiles, cols),
                                     out.download(), {1e-4, 1e-5},
                                     {{kTiles, kBankTileRows, kBankTileRows}, what}));
  EXPECT_TRUE(out.guards_intact(what));
}

TEST(BankConflictsEdge, RunsOnTheGivenStream) { check_keeps_to_stream(Shape::Square); }

TEST(BankConflictsEdge, RectRunsOnTheGivenStream) { check_keeps_to_stream(Shape::Rect); }

// The same buffers refilled: a result remembered from the first call (by pointer or by
// size) fails the second check.
void check_calls_again(Shape s) {
  constexpr int kTiles = 300;
  auto rng = course::testing::case_rng();
  const int cols = cols_of(s);
  course::DeviceBuffer<float> in(static_cast<std::size_t>(kTiles) * kBankTileRows * cols);
  GuardedOutput<float> out(static_cast<std::size_t>(kTiles) * kOutPerTile);
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = course::random_floats(in.size(), -1.f, 1.f, rng);
    in.upload(in_host);
    out.repoison();
    launch(s, in.data(), out.data(), kTiles, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::close(
        bank_conflicts_reference(in_host, kTiles, cols), out.download(), {1e-4, 1e-5},
        {{kTiles, kBankTileRows, kBankTileRows},
         std::string(launcher_name(s)) + "'s out after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact(std::string(launcher_name(s)) + "'s out after two calls"));
}

TEST(BankConflictsEdge, CallsAgainWithNewInputs) { check_calls_again(Shape::Square); }

TEST(BankConflictsEdge, RectCallsAgainWithNewInputs) { check_calls_again(Shape::Rect); }

}  // namespace
