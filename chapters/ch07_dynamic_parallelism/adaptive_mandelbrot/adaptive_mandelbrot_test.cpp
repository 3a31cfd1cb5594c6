#include "adaptive_mandelbrot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "adaptive_mandelbrot_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedOutput;

// The pending-launch limit the guide documents (2048 by default) raised above the child
// launches of any case, once before the first case, as the header promises (the guide asks for
// the device runtime's limits to be set before kernels run). A launcher must not count on a
// pool larger than the documented one.
class PendingLaunchLimit : public ::testing::Environment {
 public:
  void SetUp() override {
    const cudaError_t status =
        cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, kPendingLaunchLimit);
    if (status != cudaSuccess)
      ADD_FAILURE() << "cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, "
                    << kPendingLaunchLimit << ") failed: " << cudaGetErrorName(status);
  }
};
[[maybe_unused]] ::testing::Environment* const pending_launch_limit =
    ::testing::AddGlobalTestEnvironment(new PendingLaunchLimit);

// Where the pictures look. Each case jitters its scene's centre and scale with the case's
// seed, so no answer can be learnt by heart.
enum class Scene {
  WholeSet,      // the whole set: big regions inside and outside, and the boundary between
  BoundaryZoom,  // deep in a valley of the boundary: few regions are even
  Inside,        // inside the main cardioid: every dwell is max_dwell, every region is filled
  Outside,       // right of the set: every point escapes, in bands of equal dwell
};

const char* scene_name(Scene scene) {
  switch (scene) {
    case Scene::WholeSet: return "the whole set";
    case Scene::BoundaryZoom: return "a zoom on the boundary";
    case Scene::Inside: return "a view inside the set";
    case Scene::Outside: return "a view outside the set";
  }
  return "?";
}

MandelbrotView view_of(Scene scene, int width, int height, std::mt19937_64& rng) {
  double centre_x = 0, centre_y = 0, span = 0, jitter = 0;
  switch (scene) {
    case Scene::WholeSet: centre_x = -0.75, centre_y = 0.0, span = 3.0, jitter = 0.05; break;
    case Scene::BoundaryZoom:
      centre_x = -0.7453, centre_y = 0.1127, span = 0.02, jitter = 0.001;
      break;
    // The square [-0.26, -0.14] x [-0.06, 0.06] lies well inside the main cardioid.
    case Scene::Inside: centre_x = -0.2, centre_y = 0.0, span = 0.1, jitter = 0.01; break;
    // Nothing of the set lies right of x = 0.48.
    case Scene::Outside: centre_x = 0.9, centre_y = 0.9, span = 0.4, jitter = 0.05; break;
  }
  std::uniform_real_distribution<double> shift(-jitter, jitter), scale(0.9, 1.1);
  centre_x += shift(rng);
  centre_y += shift(rng);
  const double pixel = span * scale(rng) / std::max(width, height);
  MandelbrotView view;
  view.x0 = static_cast<float>(centre_x - pixel * width / 2);
  view.y0 = static_cast<float>(centre_y - pixel * height / 2);
  view.dx = static_cast<float>(pixel);
  view.dy = static_cast<float>(pixel);
  return view;
}

// Everything a student needs to rerun a failing case by hand.
std::string describe(int width, int height, Scene scene, const MandelbrotView& view,
                     const MandelbrotParams& p) {
  std::ostringstream out;
  out << "dwells of a " << width << " x " << height << " image of " << scene_name(scene)
      << " (view x0 = " << view.x0 << ", y0 = " << view.y0 << ", dx = " << view.dx
      << ", dy = " << view.dy << "; params initial_size = " << p.initial_size
      << ", subdivisions = " << p.subdivisions << ", max_depth = " << p.max_depth
      << ", min_size = " << p.min_size << ", max_dwell = " << p.max_dwell << ")";
  return out.str();
}

// Exact comparison of two images, with the first differing pixel by its coordinates and, when
// pixels still hold the poison, what leaves a region unwritten.
::testing::AssertionResult same_image(const std::vector<int>& expected,
                                      const std::vector<int>& actual, int width,
                                      const MandelbrotParams& params, const std::string& what) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << what << ": " << actual.size()
                                         << " dwells read back, expected " << expected.size();
  const int poison = course::testing::poison_value<int>();
  std::size_t differing = 0, unwritten = 0, first = 0, first_unwritten = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (actual[i] == expected[i]) continue;
    if (differing++ == 0) first = i;
    if (actual[i] == poison && unwritten++ == 0) first_unwritten = i;
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  const auto x = [&](std::size_t i) { return static_cast<int>(i % width); };
  const auto y = [&](std::size_t i) { return static_cast<int>(i / width); };
  auto failure = ::testing::AssertionFailure();
  failure << what << ": " << differing << " of " << expected.size()
          << " pixels differ; the first is (x, y) = (" << x(first) << ", " << y(first)
          << "): expected dwell " << expected[first] << ", got " << actual[first] << ".";
  if (unwritten > 0) {
    const int side = params.initial_size;
    failure << " " << unwritten << " pixels were never written (still " << poison
            << "), the first at (" << x(first_unwritten) << ", " << y(first_unwritten)
            << "), in the initial region at (" << x(first_unwritten) / side * side << ", "
            << y(first_unwritten) / side * side << "): a child launch failed on the device "
            << "(a bad configuration? check cudaGetLastError() right after the launch, on the "
               "device: the host is never told) or no block covered that part of the region "
               "(the child grid's size, the clipping at the region's and the image's edges).";
  } else {
    failure << " Every pixel was written, some with the wrong dwell: check the border ring "
               "(first and last rows and columns of the clipped region), the choice between "
               "filling, subdividing (depth + 1 < max_depth and ceil(side / subdivisions) >= "
               "min_size) and computing every pixel, and where each sub-region starts.";
  }
  return failure;
}

struct MandelbrotCase {
  std::string name;
  int width;
  int height;
  Scene scene;
  MandelbrotParams params;  // max_dwell is drawn per case
};

// GoogleTest prints a case by its name, not its bytes.
void PrintTo(const MandelbrotCase& c, std::ostream* out) { *out << c.name; }

MandelbrotParams params_of(int initial_size, int subdivisions, int max_depth, int min_size) {
  MandelbrotParams p;
  p.initial_size = initial_size;
  p.subdivisions = subdivisions;
  p.max_depth = max_depth;
  p.min_size = min_size;
  return p;
}

// The image mandelbrot_adaptive writes on a fresh stream into a guarded, poisoned buffer.
std::vector<int> adaptive_image(int width, int height, const MandelbrotView& view,
                                const MandelbrotParams& params) {
  const std::size_t n = static_cast<std::size_t>(width) * height;
  GuardedOutput<int> dwells(n);
  course::Stream stream;
  mandelbrot_adaptive(dwells.data(), width, height, view, params, stream);
  stream.synchronize();
  EXPECT_TRUE(dwells.guards_intact("dwells"));
  return dwells.download();
}

// Runs one case and compares the whole image with the reference.
void check_case(const MandelbrotCase& c, int lowest_dwell, int highest_dwell) {
  auto rng = course::testing::case_rng();
  const MandelbrotView view = view_of(c.scene, c.width, c.height, rng);
  MandelbrotParams params = c.params;
  params.max_dwell = std::uniform_int_distribution<int>(lowest_dwell, highest_dwell)(rng);
  EXPECT_TRUE(same_image(mandelbrot_reference(c.width, c.height, view, params),
                         adaptive_image(c.width, c.height, view, params), c.width, params,
                         describe(c.width, c.height, c.scene, view, params)));
}

std::size_t pixels_differing(const std::vector<int>& a, const std::vector<int>& b) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < a.size(); ++i) count += a[i] != b[i];
  return count;
}

// The algorithm's image differs from pixel_dwell's only where a thin filament of high dwell
// slips between a region's border pixels, a few pixels in a picture, so the cases below look
// for a view of the boundary where the rule they check changes the image: telling(pixel
// dwells) says so. At 128 iterations about one jittered view in four tells for the rarest
// rule (a fill that hides pixels; more with more iterations), so 40 attempts all but always
// find one; when none does, the last one is checked all the same.
template <class Telling>
MandelbrotView telling_view(int width, int height, int max_dwell, std::mt19937_64& rng,
                            Telling telling) {
  MandelbrotView view;
  for (int attempt = 0; attempt < 40; ++attempt) {
    view = view_of(Scene::BoundaryZoom, width, height, rng);
    if (telling(mandelbrot_flat_reference(width, height, view, max_dwell))) break;
  }
  return view;
}

class AdaptiveMandelbrot : public ::testing::TestWithParam<MandelbrotCase> {};

TEST_P(AdaptiveMandelbrot, MatchesReference) {
  // Small images at a few hundred iterations, large ones at a thousand and more.
  const bool large = GetParam().width * GetParam().height > 100000;
  check_case(GetParam(), large ? 600 : 128, large ? 1200 : 512);
}

std::string case_name(const ::testing::TestParamInfo<MandelbrotCase>& info) {
  return info.param.name;
}

// Sizes that divide nothing (odd, prime, thinner than a region's ring), every scene, and the
// parameters one at a time: no subdivision (max_depth 1, min_size too large), one level, as
// deep as the image allows, two, three, four and 32 sub-regions a side, initial regions of
// one pixel and larger than the image.
INSTANTIATE_TEST_SUITE_P(
    Small, AdaptiveMandelbrot,
    ::testing::Values(
        MandelbrotCase{"whole_1x1", 1, 1, Scene::WholeSet, params_of(16, 4, 3, 2)},
        MandelbrotCase{"whole_7x3", 7, 3, Scene::WholeSet, params_of(4, 2, 3, 1)},
        MandelbrotCase{"whole_3x40", 3, 40, Scene::WholeSet, params_of(8, 2, 4, 1)},
        MandelbrotCase{"whole_100x37", 100, 37, Scene::WholeSet, params_of(16, 4, 3, 2)},
        MandelbrotCase{"whole_257x131", 257, 131, Scene::WholeSet, params_of(32, 4, 3, 2)},
        MandelbrotCase{"boundary_128x128_k2", 128, 128, Scene::BoundaryZoom,
                       params_of(32, 2, 4, 2)},
        MandelbrotCase{"boundary_131x257_k4", 131, 257, Scene::BoundaryZoom,
                       params_of(64, 4, 3, 4)},
        MandelbrotCase{"inside_100x37", 100, 37, Scene::Inside, params_of(16, 4, 3, 2)},
        MandelbrotCase{"inside_257x131", 257, 131, Scene::Inside, params_of(64, 4, 3, 4)},
        MandelbrotCase{"outside_100x37", 100, 37, Scene::Outside, params_of(16, 4, 3, 2)},
        MandelbrotCase{"outside_257x131", 257, 131, Scene::Outside, params_of(32, 2, 5, 2)},
        MandelbrotCase{"depth_1_whole_257x131", 257, 131, Scene::WholeSet,
                       params_of(32, 4, 1, 1)},
        MandelbrotCase{"depth_2_boundary_200x150", 200, 150, Scene::BoundaryZoom,
                       params_of(32, 4, 2, 1)},
        MandelbrotCase{"deep_boundary_256x256", 256, 256, Scene::BoundaryZoom,
                       params_of(256, 2, 24, 1)},
        MandelbrotCase{"subdivisions_3_whole_100x100", 100, 100, Scene::WholeSet,
                       params_of(50, 3, 4, 1)},
        MandelbrotCase{"subdivisions_32_whole_130x70", 130, 70, Scene::WholeSet,
                       params_of(64, 32, 2, 1)},
        MandelbrotCase{"min_size_large_whole_200x120", 200, 120, Scene::WholeSet,
                       params_of(64, 4, 4, 64)},
        MandelbrotCase{"initial_size_1_whole_31x33", 31, 33, Scene::WholeSet,
                       params_of(1, 2, 3, 1)},
        MandelbrotCase{"initial_size_beyond_image_whole_100x37", 100, 37, Scene::WholeSet,
                       params_of(512, 4, 4, 2)}),
    case_name);

// Pictures with thousands of regions; many_launches starts about ten thousand child grids in
// one call, five times the guide's default pending-launch limit (2048), which the tests raise.
INSTANTIATE_TEST_SUITE_P(
    Large, AdaptiveMandelbrot,
    ::testing::Values(
        MandelbrotCase{"whole_1024x768", 1024, 768, Scene::WholeSet, params_of(64, 4, 3, 4)},
        MandelbrotCase{"boundary_777x555", 777, 555, Scene::BoundaryZoom,
                       params_of(128, 4, 4, 2)},
        MandelbrotCase{"many_launches_whole_1500x1500", 1500, 1500, Scene::WholeSet,
                       params_of(32, 2, 4, 1)}),
    case_name);

TEST(AdaptiveMandelbrotEdge, FillHidesWhatTheBorderMisses) {
  // A region whose border has one dwell is filled with it, even where its inside differs:
  // computing every pixel gives another image here.
  const int width = 256, height = 256;
  auto rng = course::testing::case_rng();
  MandelbrotParams params = params_of(64, 2, 4, 1);
  params.max_dwell = std::uniform_int_distribution<int>(128, 256)(rng);
  std::vector<int> expected;
  std::size_t hidden = 0;
  const MandelbrotView view = telling_view(width, height, params.max_dwell, rng,
                                           [&](const std::vector<int>& flat) {
    expected = mandelbrot_reference_from_pixels(flat, width, height, params);
    hidden = pixels_differing(flat, expected);
    return hidden > 0;
  });
  std::ostringstream what;
  what << describe(width, height, Scene::BoundaryZoom, view, params) << "; in this view "
       << hidden << " pixels of the algorithm's image are not their own pixel_dwell (a filled "
       << "region keeps its border's dwell), so computing every pixel does not pass";
  EXPECT_TRUE(same_image(expected, adaptive_image(width, height, view, params), width, params,
                         what.str()));
}

// Two parameter sets one parameter apart, `first` and `second`, must give different images:
// a view in which their reference images differ (telling_view, drawn from `rng`), then the
// adaptive image of each compared with its own. `difference` says what differs, "the images
// at max_depth 2 and 3".
void check_both_images(const MandelbrotParams& first, const MandelbrotParams& second,
                       std::mt19937_64& rng, const std::string& difference) {
  const int width = 256, height = 256;
  std::vector<int> expected_first, expected_second;
  const MandelbrotView view = telling_view(width, height, first.max_dwell, rng,
                                           [&](const std::vector<int>& flat) {
    expected_first = mandelbrot_reference_from_pixels(flat, width, height, first);
    expected_second = mandelbrot_reference_from_pixels(flat, width, height, second);
    return expected_first != expected_second;
  });
  std::ostringstream note;
  note << "; in this view " << difference << " differ at "
       << pixels_differing(expected_first, expected_second) << " pixels";
  EXPECT_TRUE(same_image(expected_first, adaptive_image(width, height, view, first), width,
                         first,
                         describe(width, height, Scene::BoundaryZoom, view, first) + note.str()));
  EXPECT_TRUE(same_image(expected_second, adaptive_image(width, height, view, second), width,
                         second,
                         describe(width, height, Scene::BoundaryZoom, view, second) +
                             note.str()));
}

TEST(AdaptiveMandelbrotEdge, MaxDepthStopsTheSubdivision) {
  // Regions at depth max_depth - 1 are filled or computed, never cut again: the same view at
  // max_depth 2 and 3 gives two different images here.
  auto rng = course::testing::case_rng();
  MandelbrotParams shallow = params_of(64, 4, 2, 1);
  shallow.max_dwell = std::uniform_int_distribution<int>(128, 256)(rng);
  MandelbrotParams deeper = shallow;
  deeper.max_depth = 3;
  check_both_images(shallow, deeper, rng, "the images at max_depth 2 and 3");
}

TEST(AdaptiveMandelbrotEdge, SubdivisionsSetTheSubRegions) {
  // k = 2 and k = 4 cut the same region into sub-regions of different sides, and so fill
  // different ones: two different images here.
  auto rng = course::testing::case_rng();
  MandelbrotParams halves = params_of(64, 2, 3, 1);
  halves.max_dwell = std::uniform_int_distribution<int>(128, 256)(rng);
  MandelbrotParams quarters = halves;
  quarters.subdivisions = 4;
  check_both_images(halves, quarters, rng, "the images with 2 and 4 subdivisions");
}

TEST(AdaptiveMandelbrotEdge, TheHostLaunchesOnlyDepthZero) {
  // The image alone does not show where the sub-regions were launched from: the host could
  // launch one grid per depth over every region that might need it. So the call is recorded
  // into a graph instead of run: the host's part must be ONE kernel launch (depth 0, the
  // initial regions), every child grid being launched from the device; while the same call,
  // run, draws the algorithm's image.
  const int width = 300, height = 200;
  const MandelbrotParams base = params_of(32, 4, 3, 2);
  auto rng = course::testing::case_rng();
  const MandelbrotView view = view_of(Scene::WholeSet, width, height, rng);
  MandelbrotParams params = base;
  params.max_dwell = std::uniform_int_distribution<int>(128, 512)(rng);
  const std::size_t n = static_cast<std::size_t>(width) * height;
  auto dwells = course::testing::poisoned_output<int>(n);
  course::Stream stream;
  const auto call = [&](cudaStream_t s) {
    mandelbrot_adaptive(dwells.data(), width, height, view, params, s);
  };
  // Run first, which also keeps one-time set-up (loading the kernel) out of the recording.
  call(stream);
  stream.synchronize();
  EXPECT_TRUE(same_image(mandelbrot_reference(width, height, view, params), dwells.download(),
                         width, params, describe(width, height, Scene::WholeSet, view, params)));

  course::testing::RecordedGraph recorded(stream, call);
  ASSERT_TRUE(recorded.problem().empty()) << "mandelbrot_adaptive: " << recorded.problem();
  ASSERT_EQ(recorded.kernels(), 1)
      << "mandelbrot_adaptive enqueued " << recorded.census() << " from the host for "
      << describe(width, height, Scene::WholeSet, view, params)
      << "; it launches ONE kernel, over the initial regions, and each region that is "
         "subdivided launches its sub-regions as a child grid from the device";
}

TEST(AdaptiveMandelbrotEdge, CallsAgainWithNewInputs) {
  // Same buffer and size, a new view (and dwell limit) each call: a launcher that remembers
  // its last image by pointer or size returns the first call's picture the second time.
  const int width = 200, height = 150;
  const MandelbrotParams base = params_of(32, 4, 3, 2);
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> dwells(static_cast<std::size_t>(width) * height);
  course::Stream stream;
  for (const std::string call : {"first call", "second call"}) {
    const MandelbrotView view = view_of(Scene::WholeSet, width, height, rng);
    MandelbrotParams params = base;
    params.max_dwell = std::uniform_int_distribution<int>(128, 512)(rng);
    dwells.fill_bytes(course::kPoisonByte);
    mandelbrot_adaptive(dwells.data(), width, height, view, params, stream);
    stream.synchronize();
    EXPECT_TRUE(same_image(mandelbrot_reference(width, height, view, params), dwells.download(),
                           width, params,
                           describe(width, height, Scene::WholeSet, view, params) + " after the " +
                               call));
  }
}

TEST(AdaptiveMandelbrotStream, RunsOnTheGivenStream) {
  // The stream is held shut while mandelbrot_adaptive returns: a kernel launched on another
  // stream (the default one, one of its own) writes dwells meanwhile, a launcher that waits
  // for the device never returns. Child grids belong to their parent's launch, so they wait
  // with it.
  const int width = 512, height = 384;
  const MandelbrotParams base = params_of(64, 4, 3, 4);
  auto rng = course::testing::case_rng();
  const MandelbrotView view = view_of(Scene::WholeSet, width, height, rng);
  MandelbrotParams params = base;
  params.max_dwell = std::uniform_int_distribution<int>(128, 512)(rng);
  const std::size_t n = static_cast<std::size_t>(width) * height;
  auto dwells = course::testing::poisoned_output<int>(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { mandelbrot_adaptive(dwells.data(), width, height, view, params, s); },
      {{dwells.data(), n * sizeof(int), "dwells"}}));
  EXPECT_TRUE(same_image(mandelbrot_reference(width, height, view, params), dwells.download(),
                         width, params, describe(width, height, Scene::WholeSet, view, params)));
}

}  // namespace
