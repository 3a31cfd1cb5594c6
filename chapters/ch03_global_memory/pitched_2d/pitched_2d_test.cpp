#include "pitched_2d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "course/testing.h"
#include "pitched_2d_reference.h"

namespace {

using Shape = std::tuple<int, int>;  // width, height

// Owns a student allocation for the length of a test.
struct Owned {
  Pitched p;
  Owned(int w, int h) : p(pitched_alloc(w, h)) {}
  ~Owned() {
    if (p.ptr != nullptr) pitched_free(p);
  }
};

TEST(Pitched2D, AllocMatchesCudaMallocPitch) {
  for (const auto& [w, h] : {Shape{1, 1}, Shape{100, 37}, Shape{129, 3}, Shape{1000, 2}}) {
    Owned owned(w, h);
    ASSERT_NE(owned.p.ptr, nullptr) << "pitched_alloc(" << w << ", " << h << ") gave nullptr";
    EXPECT_EQ(owned.p.width, w);
    EXPECT_EQ(owned.p.height, h);
    void* probe = nullptr;
    std::size_t pitch = 0;
    CUDA_CHECK(cudaMallocPitch(&probe, &pitch, w * sizeof(float), h));
    CUDA_CHECK(cudaFree(probe));
    EXPECT_EQ(owned.p.pitch_bytes, pitch)
        << "for width " << w << ": the pitch must be the one cudaMallocPitch chooses";
  }
}

TEST(Pitched2D, UploadDownloadRoundTrips) {
  const int w = 100;
  const int h = 33;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(static_cast<std::size_t>(w) * h, -5.f, 5.f, rng);
  Owned owned(w, h);
  ASSERT_NE(owned.p.ptr, nullptr);
  ASSERT_GE(owned.p.pitch_bytes, w * sizeof(float));
  course::testing::fill_device_bytes(owned.p.ptr, course::kPoisonByte, owned.p.pitch_bytes * h);
  pitched_upload(owned.p, values.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  // Row r must start at r * pitch: read the rows straight from the device.
  for (int r = 0; r < h; ++r) {
    std::vector<float> row(w);
    CUDA_CHECK(cudaMemcpy(row.data(),
                          reinterpret_cast<const char*>(owned.p.ptr) + r * owned.p.pitch_bytes,
                          w * sizeof(float), cudaMemcpyDeviceToHost));
    ASSERT_TRUE(course::testing::equal(
        std::vector<float>(values.begin() + r * w, values.begin() + (r + 1) * w), row,
        {{}, "device row " + std::to_string(r) + " after pitched_upload"}));
  }
  std::vector<float> back(values.size(), -1.f);
  pitched_download(back.data(), owned.p, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(values, back, {{static_cast<std::size_t>(h),
                                                     static_cast<std::size_t>(w)},
                                                    "pitched_download"}));
}

// The heights of the copies a recorded graph holds: a 2D copy moves every row in one.
std::vector<std::size_t> copy_heights(const course::testing::RecordedGraph& recorded) {
  std::vector<std::size_t> heights;
  for (cudaGraphNode_t node :
       course::testing::graph_nodes(recorded.graph(), cudaGraphNodeTypeMemcpy)) {
    cudaMemcpy3DParms params{};
    CUDA_CHECK(cudaGraphMemcpyNodeGetParams(node, &params));
    heights.push_back(params.extent.height * params.extent.depth);
  }
  return heights;
}

// Upload and download recorded into graphs instead of run: each is one cudaMemcpy2DAsync, a
// single copy of all the rows between the packed host rows and the pitched ones. A copy per
// row (or a packed copy and a kernel that spreads the rows) lands the same data. The host
// memory is pinned, which a recorded copy needs; one ordinary call of each comes first.
TEST(Pitched2D, UploadAndDownloadAreOne2dCopyEach) {
  const int w = 100, h = 37;
  const std::size_t n = static_cast<std::size_t>(w) * h;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -5.f, 5.f, rng);
  course::PinnedBuffer<float> host(n);
  std::copy(values.begin(), values.end(), host.data());
  Owned owned(w, h);
  ASSERT_NE(owned.p.ptr, nullptr);
  course::Stream stream;
  const std::function<void(cudaStream_t)> calls[] = {
      [&](cudaStream_t s) { pitched_upload(owned.p, host.data(), s); },
      [&](cudaStream_t s) { pitched_download(host.data(), owned.p, s); }};
  const char* names[] = {"pitched_upload", "pitched_download"};
  for (int k = 0; k < 2; ++k) {
    calls[k](stream);
    stream.synchronize();
    course::testing::RecordedGraph recorded(stream, calls[k]);
    ASSERT_TRUE(recorded.problem().empty()) << names[k] << ": " << recorded.problem();
    const auto heights = copy_heights(recorded);
    EXPECT_TRUE(recorded.copies() == 1 && recorded.kernels() + recorded.memsets() +
                                              recorded.others() == 0 &&
                heights.size() == 1 && heights[0] == static_cast<std::size_t>(h))
        << names[k] << " of " << h << " rows of " << w << " floats enqueued "
        << recorded.census() << (heights.empty() ? "" : " (the first copy moves ")
        << (heights.empty() ? "" : std::to_string(heights[0]) + " rows)")
        << "; expected one cudaMemcpy2DAsync of all " << h << " rows and nothing else";
  }
}

void check_mirror_sum(int w, int h) {
  const std::size_t n = static_cast<std::size_t>(w) * h;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -100.f, 100.f, rng);
  Owned in(w, h), out(w, h);
  ASSERT_TRUE(in.p.ptr != nullptr && out.p.ptr != nullptr);
  ASSERT_GE(out.p.pitch_bytes, w * sizeof(float));
  // Upload with the course's own cudaMemcpy2D, so this case tests the kernel alone.
  CUDA_CHECK(cudaMemcpy2D(in.p.ptr, in.p.pitch_bytes, values.data(), w * sizeof(float),
                          w * sizeof(float), h, cudaMemcpyHostToDevice));
  course::testing::fill_device_bytes(out.p.ptr, course::kPoisonByte, out.p.pitch_bytes * h);
  mirror_sum(in.p, out.p, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  // The whole allocation, padding included.
  const std::size_t row_floats = out.p.pitch_bytes / sizeof(float);
  std::vector<float> raw(row_floats * h);
  CUDA_CHECK(cudaMemcpy(raw.data(), out.p.ptr, out.p.pitch_bytes * h, cudaMemcpyDeviceToHost));
  std::vector<float> got(n), padding;
  for (int r = 0; r < h; ++r) {
    std::copy(raw.begin() + r * row_floats, raw.begin() + r * row_floats + w,
              got.begin() + static_cast<std::size_t>(r) * w);
    padding.insert(padding.end(), raw.begin() + r * row_floats + w,
                   raw.begin() + (r + 1) * row_floats);
  }
  EXPECT_TRUE(course::testing::equal(mirror_sum_reference(values, w, h), got,
                                     {{static_cast<std::size_t>(h), static_cast<std::size_t>(w)},
                                      "out"}));
  std::vector<float> poison(padding.size());
  std::memset(poison.data(), course::kPoisonByte, poison.size() * sizeof(float));
  EXPECT_TRUE(course::testing::equal(poison, padding, {{}, "row padding of out (must not be "
                                                          "written)"}));
}

class MirrorSum : public ::testing::TestWithParam<Shape> {};
TEST_P(MirrorSum, MatchesReference) {
  check_mirror_sum(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

std::string name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(std::get<0>(info.param)) + "x" + std::to_string(std::get<1>(info.param));
}
INSTANTIATE_TEST_SUITE_P(Small, MirrorSum,
                         ::testing::Values(Shape{1, 1}, Shape{7, 1}, Shape{1, 7}, Shape{31, 5},
                                           Shape{33, 33}, Shape{100, 100}, Shape{100, 7},
                                           Shape{129, 65}, Shape{255, 3}),
                         name);
INSTANTIATE_TEST_SUITE_P(Large, MirrorSum,
                         ::testing::Values(Shape{1000, 999}, Shape{4099, 517}, Shape{100, 20001}),
                         name);

// The rows of p, tightly packed, read with the course's own cudaMemcpy2D.
std::vector<float> packed_rows(const Pitched& p) {
  std::vector<float> rows(static_cast<std::size_t>(p.width) * p.height);
  CUDA_CHECK(cudaMemcpy2D(rows.data(), p.width * sizeof(float), p.ptr, p.pitch_bytes,
                          p.width * sizeof(float), p.height, cudaMemcpyDeviceToHost));
  return rows;
}

// Writes tightly packed rows into p with the course's own cudaMemcpy2D.
void upload_rows(const Pitched& p, const std::vector<float>& rows) {
  CUDA_CHECK(cudaMemcpy2D(p.ptr, p.pitch_bytes, rows.data(), p.width * sizeof(float),
                          p.width * sizeof(float), p.height, cudaMemcpyHostToDevice));
  course::testing::wait_for_setup();
}

void poison_allocation(const Pitched& p) {
  course::testing::fill_device_bytes(p.ptr, course::kPoisonByte, p.pitch_bytes * p.height);
}

// The whole allocation of p, padding included, for keeps_to_stream to watch.
course::testing::Watched whole(const Pitched& p, const std::string& name) {
  return {p.ptr, p.pitch_bytes * p.height, name};
}

course::CompareOptions rows_of(const Pitched& p, const std::string& what) {
  return {{static_cast<std::size_t>(p.height), static_cast<std::size_t>(p.width)}, what};
}

// keeps_to_stream holds the stream shut while the function returns: a launch or a copy
// anywhere else (the default stream, a synchronous cudaMemcpy2D, a stream of its own) writes
// the watched memory meanwhile, and waiting on the stream is reported. Host memory is pinned
// here, so an asynchronous copy need not finish before it returns. RunsOnTheGivenStream is
// mirror_sum's case.
TEST(Pitched2DEdge, RunsOnTheGivenStream) {
  const int w = 1023, h = 517;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(static_cast<std::size_t>(w) * h, -100.f, 100.f, rng);
  Owned in(w, h), out(w, h);
  ASSERT_TRUE(in.p.ptr != nullptr && out.p.ptr != nullptr);
  upload_rows(in.p, values);
  poison_allocation(out.p);
  ASSERT_TRUE(course::testing::keeps_to_stream([&](cudaStream_t s) { mirror_sum(in.p, out.p, s); },
                                               {whole(out.p, "out")}));
  EXPECT_TRUE(course::testing::equal(mirror_sum_reference(values, w, h), packed_rows(out.p),
                                     rows_of(out.p, "out")));
}

TEST(Pitched2DEdge, UploadRunsOnTheGivenStream) {
  const int w = 700, h = 301;
  const std::size_t n = static_cast<std::size_t>(w) * h;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -5.f, 5.f, rng);
  course::PinnedBuffer<float> host(n);
  std::copy(values.begin(), values.end(), host.data());
  Owned dst(w, h);
  ASSERT_NE(dst.p.ptr, nullptr);
  poison_allocation(dst.p);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { pitched_upload(dst.p, host.data(), s); }, {whole(dst.p, "dst")}));
  EXPECT_TRUE(course::testing::equal(values, packed_rows(dst.p),
                                     rows_of(dst.p, "dst after pitched_upload")));
}

TEST(Pitched2DEdge, DownloadRunsOnTheGivenStream) {
  const int w = 700, h = 301;
  const std::size_t n = static_cast<std::size_t>(w) * h;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -5.f, 5.f, rng);
  Owned src(w, h);
  ASSERT_NE(src.p.ptr, nullptr);
  upload_rows(src.p, values);
  course::PinnedBuffer<float> host(n);
  std::memset(host.data(), course::kPoisonByte, host.bytes());
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { pitched_download(host.data(), src.p, s); },
      {course::testing::watched(host, "host")}));
  EXPECT_TRUE(course::testing::equal(values, std::vector<float>(host.data(), host.data() + n),
                                     rows_of(src.p, "host after pitched_download")));
}

// Same buffers, new contents: a function that remembers its last answer by pointer or by
// shape returns the first call's result the second time. CallsAgainWithNewInputs is
// mirror_sum's case.
TEST(Pitched2DEdge, CallsAgainWithNewInputs) {
  const int w = 509, h = 203;
  auto rng = course::testing::case_rng();
  Owned in(w, h), out(w, h);
  ASSERT_TRUE(in.p.ptr != nullptr && out.p.ptr != nullptr);
  for (const std::string call : {"first call", "second call"}) {
    const auto values =
        course::random_floats(static_cast<std::size_t>(w) * h, -100.f, 100.f, rng);
    upload_rows(in.p, values);
    poison_allocation(out.p);
    mirror_sum(in.p, out.p, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(mirror_sum_reference(values, w, h), packed_rows(out.p),
                                       rows_of(out.p, "out after the " + call)));
  }
}

TEST(Pitched2DEdge, UploadCallsAgainWithNewInputs) {
  const int w = 509, h = 203;
  auto rng = course::testing::case_rng();
  std::vector<float> host(static_cast<std::size_t>(w) * h);
  Owned dst(w, h);
  ASSERT_NE(dst.p.ptr, nullptr);
  for (const std::string call : {"first call", "second call"}) {
    const auto values = course::random_floats(host.size(), -5.f, 5.f, rng);
    std::copy(values.begin(), values.end(), host.begin());
    poison_allocation(dst.p);
    pitched_upload(dst.p, host.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(values, packed_rows(dst.p),
                                       rows_of(dst.p, "dst after the " + call)));
  }
}

TEST(Pitched2DEdge, DownloadCallsAgainWithNewInputs) {
  const int w = 509, h = 203;
  auto rng = course::testing::case_rng();
  std::vector<float> host(static_cast<std::size_t>(w) * h);
  Owned src(w, h);
  ASSERT_NE(src.p.ptr, nullptr);
  for (const std::string call : {"first call", "second call"}) {
    const auto values = course::random_floats(host.size(), -5.f, 5.f, rng);
    upload_rows(src.p, values);
    std::memset(host.data(), course::kPoisonByte, host.size() * sizeof(float));
    pitched_download(host.data(), src.p, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(
        course::testing::equal(values, host, rows_of(src.p, "host after the " + call)));
  }
}

}  // namespace
