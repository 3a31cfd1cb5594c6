#include "readonly_texture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <future>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "course/buffers.h"
#include "course/stream_gate.h"
#include "course/testing.h"
#include "readonly_texture_reference.h"

static const char* address_name(ResampleAddress address) {
  return address == ResampleAddress::kWrap ? "wrap" : "clamp";
}

// How GoogleTest prints the mode in a parameter (found by argument-dependent lookup, so in the
// enum's namespace).
static void PrintTo(ResampleAddress address, std::ostream* os) { *os << address_name(address); }

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

// ---- Part 1: readonly_gather ----------------------------------------------------------------

void check_gather(std::size_t n, std::size_t src_count) {
  auto rng = course::testing::case_rng();
  GuardedInput<float> src(course::random_floats(src_count, -1000.f, 1000.f, rng));
  GuardedInput<int> indices(
      course::random_ints(n, 0, static_cast<int>(src_count) - 1, rng));
  GuardedOutput<float> out(n);

  readonly_gather(src.data(), indices.data(), out.data(), static_cast<int>(n), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  EXPECT_TRUE(course::testing::equal(readonly_gather_reference(src.host(), indices.host()),
                                     out.download(), {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(src.unchanged("src"));
  EXPECT_TRUE(indices.unchanged("indices"));
}

class ReadonlyGather : public ::testing::TestWithParam<std::size_t> {};

// Indices drawn uniformly over a source as long as the output: every kind of access, from
// repeats within a warp to ones a whole source length apart.
TEST_P(ReadonlyGather, MatchesReference) { check_gather(GetParam(), GetParam()); }

using course::testing::size_name;

// The adversarial sizes, and (Large) sizes that need more threads than a sensible grid has.
INSTANTIATE_TEST_SUITE_P(Small, ReadonlyGather,
                         ::testing::ValuesIn(course::testing::small_sizes()), size_name);
INSTANTIATE_TEST_SUITE_P(Large, ReadonlyGather,
                         ::testing::ValuesIn(course::testing::large_sizes({(1 << 25) + 3})),
                         size_name);

// Every thread of every warp reads the same element.
TEST(ReadonlyGatherEdge, EveryIndexNamesTheOneSourceElement) { check_gather(1000, 1); }

// Indices spread over a source 250 times longer than the output.
TEST(ReadonlyGatherEdge, SourceLongerThanOutput) { check_gather(4097, 1 << 20); }

TEST(ReadonlyGatherEdge, EmptyOutputWritesNothingThenSmallWorks) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  GuardedInput<float> src(course::random_floats(kCount, -10.f, 10.f, rng));
  GuardedInput<int> indices(course::random_ints(kCount, 0, kCount - 1, rng));
  GuardedOutput<float> out(kCount);
  readonly_gather(src.data(), indices.data(), out.data(), 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(out, "out after a call with n = 0"));
  const auto poison = course::testing::poison_values<float>(kCount);
  // The same buffers then take a real n = 9 call, so doing nothing does not pass.
  readonly_gather(src.data(), indices.data(), out.data(), 9, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto expected = readonly_gather_reference(src.host(), indices.host());
  std::copy(poison.begin() + 9, poison.end(), expected.begin() + 9);
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out after an n = 9 call"}));
  EXPECT_TRUE(out.guards_intact("out after an n = 9 call"));
}

TEST(ReadonlyGatherEdge, RunsOnTheGivenStream) {
  constexpr int n = 1 << 20;
  auto rng = course::testing::case_rng();
  GuardedInput<float> src(course::random_floats(n, -1.f, 1.f, rng));
  GuardedInput<int> indices(course::random_ints(n, 0, n - 1, rng));
  GuardedOutput<float> out(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { readonly_gather(src.data(), indices.data(), out.data(), n, s); },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::equal(readonly_gather_reference(src.host(), indices.host()),
                                     out.download(), {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
}

TEST(ReadonlyGatherEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: a result remembered from the first call (by pointer or by
  // size) fails the second check.
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> src(n);
  course::DeviceBuffer<int> indices(n);
  GuardedOutput<float> out(n);
  for (const std::string call : {"first call", "second call, src and indices refilled"}) {
    const auto src_host = course::random_floats(n, -1000.f, 1000.f, rng);
    const auto indices_host = course::random_ints(n, 0, n - 1, rng);
    src.upload(src_host);
    indices.upload(indices_host);
    out.repoison();
    readonly_gather(src.data(), indices.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(readonly_gather_reference(src_host, indices_host),
                                       out.download(), {{}, "out after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact("out after two calls"));
}

// ---- Part 2: texture_resample ---------------------------------------------------------------

struct Shapes {
  int width, height;          // the image
  int out_width, out_height;  // the output
};
using ResampleCase = std::tuple<Shapes, ResampleAddress>;

void PrintTo(const Shapes& s, std::ostream* os) {
  *os << s.width << "x" << s.height << " image to " << s.out_width << "x" << s.out_height;
}

std::string shapes_text(const Shapes& s) {
  std::ostringstream text;
  PrintTo(s, &text);
  return text.str();
}

// Image texels in [0, 1): the range kResampleTolerance is stated for.
std::vector<float> random_image(const Shapes& s, std::mt19937_64& rng) {
  return course::random_floats(static_cast<std::size_t>(s.width) * s.height, 0.f, 1.f, rng);
}

std::size_t out_count(const Shapes& s) {
  return static_cast<std::size_t>(s.out_width) * s.out_height;
}

void resample(const float* image, const Shapes& s, float* out, ResampleAddress address,
              cudaStream_t stream) {
  texture_resample(image, s.width, s.height, out, s.out_width, s.out_height, address, stream);
}

// `out` (downloaded) against the reference for `image`, with the shapes and mode in the message.
::testing::AssertionResult matches_reference(const std::vector<float>& image, const Shapes& s,
                                             ResampleAddress address,
                                             const GuardedOutput<float>& out) {
  const course::CompareOptions options{
      {static_cast<std::size_t>(s.out_height), static_cast<std::size_t>(s.out_width)},
      std::string("out (row, column) for a ") + shapes_text(s) + ", " + address_name(address)};
  return course::testing::close(
      texture_resample_reference(image, s.width, s.height, s.out_width, s.out_height, address),
      out.download(), kResampleTolerance, options);
}

void check_resample(const Shapes& s, ResampleAddress address) {
  auto rng = course::testing::case_rng();
  GuardedInput<float> image(random_image(s, rng));
  GuardedOutput<float> out(out_count(s));

  resample(image.data(), s, out.data(), address, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  EXPECT_TRUE(matches_reference(image.host(), s, address, out));
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(image.unchanged("image"));
}

class TextureResample : public ::testing::TestWithParam<ResampleCase> {};

TEST_P(TextureResample, MatchesTheFilteringReference) {
  check_resample(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

std::string resample_name(const ::testing::TestParamInfo<ResampleCase>& info) {
  const Shapes& s = std::get<0>(info.param);
  return std::to_string(s.width) + "x" + std::to_string(s.height) + "_to_" +
         std::to_string(s.out_width) + "x" + std::to_string(s.out_height) + "_" +
         address_name(std::get<1>(info.param));
}

const auto kAddresses = ::testing::Values(ResampleAddress::kClamp, ResampleAddress::kWrap);

// A single texel; a single column and a single row; the same size (every sample on a texel
// centre); integer up- and downscales; non-integer ratios both ways; outputs one pixel thick
// and around warp and block sizes. Only where the output has more pixels than the image along
// an axis do samples fall outside the outer texel centres, so the upscales are what tell clamp
// from wrap.
INSTANTIATE_TEST_SUITE_P(
    Small, TextureResample,
    ::testing::Combine(::testing::Values(Shapes{1, 1, 1, 1}, Shapes{1, 1, 5, 3},
                                         Shapes{1, 9, 4, 20}, Shapes{9, 1, 20, 4},
                                         Shapes{16, 16, 16, 16}, Shapes{8, 8, 32, 32},
                                         Shapes{32, 32, 8, 8}, Shapes{13, 7, 29, 31},
                                         Shapes{100, 75, 37, 61}, Shapes{33, 31, 257, 1},
                                         Shapes{7, 5, 255, 257}, Shapes{200, 3, 33, 32}),
                       kAddresses),
    resample_name);
// Larger images both ways, and outputs taller or wider than a sensible grid covers (more than
// 65535 x 8 rows: the grid must loop).
INSTANTIATE_TEST_SUITE_P(
    Large, TextureResample,
    ::testing::Combine(::testing::Values(Shapes{1024, 768, 3001, 2003},
                                         Shapes{4096, 4096, 1000, 999},
                                         Shapes{2, 2, 3, 600001}, Shapes{30000, 1, 100003, 2},
                                         Shapes{1, 30000, 2, 70001}),
                       kAddresses),
    resample_name);

// Where the texture unit's weight for output coordinate `o` of `out_size` along an axis of
// `size` texels is certain: the sample's distance past the texel below it, counted in 256ths
// of a texel, lies 0.1 to 0.4 past a whole 256th. Rounding it to 8 fractional bits (what
// Hopper does, measured on an H200) and truncating it then give the same weight, and the
// hardware's own coordinate arithmetic (there, u held to 21 fractional bits) moves it by less
// than 0.1 of a 256th on an axis of up to 512 texels.
bool weight_is_certain(int o, int out_size, int size) {
  const float normalised = (static_cast<float>(o) + 0.5f) / static_cast<float>(out_size);
  const double steps = (static_cast<double>(normalised) * size - 0.5) * 256.0;
  const double past = steps - std::floor(steps);
  return past >= 0.1 && past <= 0.4;
}

// What a bilinear filter written in float computes along a line of texels: the sample's exact
// distance past the texel below it as the weight, where the texture unit keeps 8 bits of it.
float filtered_in_float(const std::vector<float>& line, int o, int out_size,
                        ResampleAddress address) {
  const int size = static_cast<int>(line.size());
  const float position =
      (static_cast<float>(o) + 0.5f) / static_cast<float>(out_size) * size - 0.5f;
  const float below = std::floor(position);
  const float weight = position - below;
  const auto texel = [&](long long i) {
    if (address == ResampleAddress::kWrap) return line[((i % size) + size) % size];
    return line[std::clamp<long long>(i, 0, size - 1)];
  };
  const auto i = static_cast<long long>(below);
  return (1.0f - weight) * texel(i) + weight * texel(i + 1);
}

// Two units in the last place of a value in [0, 1): what the texture unit's sum of two
// products may differ from the reference's, rounded once from double.
constexpr course::Tolerance kTextureUnitTolerance{2.5e-7, 1e-7};

TEST(TextureResampleEdge, FilteredByTheTextureUnit) {
  // The texture unit keeps each filter weight to 8 fractional bits; a bilinear filter written
  // by hand in float keeps 24, and lands up to a 256th of the neighbours' difference away:
  // inside the other cases' tolerance, but thousands of units in the last place off. Here, on
  // a row one texel high (or a column one texel wide, so that the other axis's weight is
  // exactly 0), every sample whose 8-bit weight is certain must match the reference's
  // fixed-point weights to within two units in the last place: only filtering done by the
  // texture unit (cudaFilterModeLinear) does.
  struct Line {
    Shapes shapes;
    ResampleAddress address;
  };
  const Line lines[] = {{{37, 1, 1000, 1}, ResampleAddress::kClamp},
                        {{37, 1, 1000, 1}, ResampleAddress::kWrap},
                        {{255, 1, 1021, 1}, ResampleAddress::kWrap},
                        {{512, 1, 1999, 1}, ResampleAddress::kClamp},
                        {{1, 29, 1, 777}, ResampleAddress::kWrap},
                        {{1, 100, 1, 1003}, ResampleAddress::kClamp}};
  auto rng = course::testing::case_rng();
  for (const Line& line : lines) {
    const Shapes& s = line.shapes;
    const bool row = s.height == 1;
    const int out_size = row ? s.out_width : s.out_height;
    const std::string what = std::string("out for a ") + shapes_text(s) + ", " +
                             address_name(line.address) + ", at the " +
                             "samples whose 8-bit weight is certain (the others copied from "
                             "the output)";
    GuardedInput<float> image(random_image(s, rng));
    GuardedOutput<float> out(out_count(s));
    resample(image.data(), s, out.data(), line.address, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto got = out.download();
    auto expected = texture_resample_reference(image.host(), s.width, s.height, s.out_width,
                                               s.out_height, line.address);
    std::size_t certain = 0, telling = 0;
    double float_miss = 0;
    for (int o = 0; o < out_size; ++o) {
      if (!weight_is_certain(o, out_size, row ? s.width : s.height)) {
        expected[o] = got[o];
        continue;
      }
      ++certain;
      const double miss =
          std::fabs(filtered_in_float(image.host(), o, out_size, line.address) - expected[o]);
      float_miss = std::max(float_miss, miss);
      if (miss > 100 * kTextureUnitTolerance.rel) ++telling;
    }
    // The case is only as good as its samples: a filter in float must miss many of them.
    ASSERT_GE(telling, std::size_t{100})
        << "the test's own check: only " << telling << " of the " << certain
        << " samples tell the texture unit's weights from float weights for a "
        << shapes_text(s);
    EXPECT_TRUE(course::testing::close(
        expected, got, kTextureUnitTolerance,
        {{static_cast<std::size_t>(s.out_height), static_cast<std::size_t>(s.out_width)},
         what}))
        << "a bilinear filter in float, with the sample's exact position as its weight, "
           "misses these samples by up to "
        << float_miss << ": sample through a texture object with cudaFilterModeLinear";
    EXPECT_TRUE(out.guards_intact("out"));
  }
}

TEST(TextureResampleEdge, EmptyOutputWritesNothingThenSmallWorks) {
  constexpr Shapes kSmall{3, 4, 6, 7};
  auto rng = course::testing::case_rng();
  GuardedInput<float> image(random_image(kSmall, rng));
  GuardedOutput<float> out(out_count(kSmall));
  resample(nullptr, Shapes{0, 0, 0, 5}, out.data(), ResampleAddress::kClamp, nullptr);
  resample(image.data(), Shapes{3, 4, 5, 0}, out.data(), ResampleAddress::kWrap, nullptr);
  EXPECT_TRUE(
      course::testing::wrote_nothing(out, "out after calls with out_width or out_height 0"));
  // The same buffers then take a real call, so doing nothing does not pass.
  resample(image.data(), kSmall, out.data(), ResampleAddress::kClamp, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(matches_reference(image.host(), kSmall, ResampleAddress::kClamp, out));
  EXPECT_TRUE(out.guards_intact("out after a real call"));
}

TEST(TextureResampleEdge, RunsOnTheGivenStreamAndReturnsWhenDone) {
  // texture_resample waits for its own work, so it cannot return while its stream is held
  // shut, which keeps_to_stream needs. Here the image arrives by a copy enqueued on `stream`
  // behind a gate that another thread opens a moment after the call begins: work ordered on
  // `stream` reads the image; work anywhere else runs at once and reads the zeros underneath.
  // The call must also return only once its work is done (it destroys the texture its kernel
  // reads), so the stream is idle when it returns.
  constexpr Shapes kShapes{700, 500, 1111, 777};
  auto rng = course::testing::case_rng();
  const auto image_host = random_image(kShapes, rng);
  course::Stream stream;
  GuardedOutput<float> out(out_count(kShapes));
  course::PinnedBuffer<float> staging(image_host.size());
  std::copy(image_host.begin(), image_host.end(), staging.data());
  course::DeviceBuffer<float> image(image_host.size());
  image.fill_bytes(0);
  CUDA_CHECK(cudaDeviceSynchronize());  // the zeros and the poison land before the gate shuts
  {
    course::StreamGate gate(stream);
    CUDA_CHECK(cudaMemcpyAsync(image.data(), staging.data(), image.bytes(),
                               cudaMemcpyHostToDevice, stream));
    // The future's destructor waits for the thread, so the gate outlives it.
    const auto opener = std::async(std::launch::async, [&gate] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      gate.open();
    });
    resample(image.data(), kShapes, out.data(), ResampleAddress::kWrap, stream);
    EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess)
        << "texture_resample returned while work on its stream was still running: it must "
           "wait for its kernel before the texture object and the array are destroyed";
  }
  stream.synchronize();
  EXPECT_TRUE(matches_reference(image_host, kShapes, ResampleAddress::kWrap, out))
      << "texture_resample must run after the work already on its stream (here the image's "
         "copy): work on another stream, or a synchronous copy, read the image too early";
  EXPECT_TRUE(out.guards_intact("out"));
}

TEST(TextureResampleEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: a texture or result remembered from the first call (by pointer
  // or by size) fails the second check.
  constexpr Shapes kShapes{300, 200, 411, 277};
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> image(static_cast<std::size_t>(kShapes.width) * kShapes.height);
  GuardedOutput<float> out(out_count(kShapes));
  for (const std::string call : {"first call", "second call, image refilled"}) {
    const auto image_host = random_image(kShapes, rng);
    image.upload(image_host);
    out.repoison();
    resample(image.data(), kShapes, out.data(), ResampleAddress::kClamp, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(matches_reference(image_host, kShapes, ResampleAddress::kClamp, out))
        << "after the " << call;
  }
  EXPECT_TRUE(out.guards_intact("out after two calls"));
}

TEST(TextureResampleEdge, RepeatedCallsLeaveNoDeviceMemoryBehind) {
  // A 576 KiB array per call: 200 calls that each forgot cudaFreeArray would hold over 100 MiB.
  constexpr Shapes kShapes{384, 384, 500, 300};
  constexpr int kCalls = 200;
  constexpr std::size_t kSlack = std::size_t{16} << 20;  // the driver's own bookkeeping
  auto rng = course::testing::case_rng();
  GuardedInput<float> image(random_image(kShapes, rng));
  GuardedOutput<float> out(out_count(kShapes));
  const auto call = [&] {
    resample(image.data(), kShapes, out.data(), ResampleAddress::kClamp, nullptr);
  };
  call();  // whatever the runtime sets up once on first use is not a leak
  const course::testing::DeviceMemoryWatch memory(kSlack);
  for (int i = 0; i < kCalls; ++i) call();
  EXPECT_TRUE(memory.nothing_leaked(std::to_string(kCalls) +
                                    " calls: every call must free what it allocated, "
                                    "cudaFreeArray included"));
  EXPECT_TRUE(matches_reference(image.host(), kShapes, ResampleAddress::kClamp, out));
}

TEST(TextureResampleEdge, LeavesNoStickyError) {
  // An ignored failing call (a bad texture description, a double free) leaves its error for
  // cudaGetLastError to report to the next, innocent, caller.
  constexpr Shapes kShapes{50, 40, 123, 77};
  auto rng = course::testing::case_rng();
  GuardedInput<float> image(random_image(kShapes, rng));
  GuardedOutput<float> out(out_count(kShapes));
  (void)cudaGetLastError();  // start clean: only what the call leaves counts
  resample(image.data(), kShapes, out.data(), ResampleAddress::kWrap, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const cudaError_t pending = cudaGetLastError();
  EXPECT_EQ(pending, cudaSuccess) << "texture_resample left " << cudaGetErrorName(pending)
                                  << " (" << cudaGetErrorString(pending)
                                  << ") behind: check every CUDA call it makes";
  EXPECT_TRUE(matches_reference(image.host(), kShapes, ResampleAddress::kWrap, out));
}

}  // namespace
