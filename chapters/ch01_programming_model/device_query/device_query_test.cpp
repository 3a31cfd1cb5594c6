#include "device_query.h"

#include <gtest/gtest.h>

#include <string>

#include "course/check.h"

namespace {

int device_count() {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
  return value;
}

// The student's summary and the runtime's own answer, for one device.
struct Queried {
  DeviceSummary summary;
  cudaDeviceProp prop{};
};

Queried query(int device) {
  Queried q;
  const cudaError_t status = query_device(device, &q.summary);
  EXPECT_EQ(status, cudaSuccess) << "query_device(" << device << ") returned "
                                 << cudaGetErrorName(status);
  CUDA_CHECK(cudaGetDeviceProperties(&q.prop, device));
  return q;
}


// Every case checks every device, so a query that ignores its argument fails on a multi-GPU
// machine too.
TEST(DeviceQuery, IdentityMatchesTheRuntime) {
  for (int d = 0; d < device_count(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto q = query(d);
    EXPECT_EQ(q.summary.name, std::string(q.prop.name));
    EXPECT_EQ(q.summary.major, q.prop.major);
    EXPECT_EQ(q.summary.minor, q.prop.minor);
  }
}

TEST(DeviceQuery, ExecutionLimitsMatchTheRuntime) {
  for (int d = 0; d < device_count(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto q = query(d);
    EXPECT_EQ(q.summary.sm_count, q.prop.multiProcessorCount);
    EXPECT_EQ(q.summary.warp_size, q.prop.warpSize);
    EXPECT_EQ(q.summary.max_threads_per_block, q.prop.maxThreadsPerBlock);
    EXPECT_EQ(q.summary.max_threads_per_sm, q.prop.maxThreadsPerMultiProcessor);
    EXPECT_EQ(q.summary.max_blocks_per_sm, q.prop.maxBlocksPerMultiProcessor);
    EXPECT_EQ(q.summary.registers_per_sm, q.prop.regsPerMultiprocessor);
  }
}

TEST(DeviceQuery, MemorySizesMatchTheRuntime) {
  for (int d = 0; d < device_count(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto q = query(d);
    EXPECT_EQ(q.summary.shared_memory_per_block, q.prop.sharedMemPerBlock);
    EXPECT_EQ(q.summary.shared_memory_per_block_optin, q.prop.sharedMemPerBlockOptin);
    EXPECT_EQ(q.summary.shared_memory_per_sm, q.prop.sharedMemPerMultiprocessor);
    EXPECT_EQ(q.summary.global_memory, q.prop.totalGlobalMem);
    EXPECT_EQ(q.summary.l2_cache, q.prop.l2CacheSize);
  }
}

TEST(DeviceQuery, MemoryInterfaceMatchesTheRuntime) {
  for (int d = 0; d < device_count(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto q = query(d);
    EXPECT_EQ(q.summary.memory_bus_width_bits, q.prop.memoryBusWidth);
    EXPECT_EQ(q.summary.memory_clock_khz, attribute(cudaDevAttrMemoryClockRate, d))
        << "the memory clock comes from cudaDeviceGetAttribute(cudaDevAttrMemoryClockRate)";
  }
}

TEST(DeviceQuery, PeakBandwidthFromClockAndBusWidth) {
  for (int d = 0; d < device_count(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto q = query(d);
    // kHz -> Hz, two transfers per clock, bits -> bytes, bytes/s -> GB/s.
    const double expected = attribute(cudaDevAttrMemoryClockRate, d) * 1e3 * 2.0 *
                            (q.prop.memoryBusWidth / 8.0) / 1e9;
    EXPECT_NEAR(q.summary.peak_memory_bandwidth_gbps, expected, expected * 1e-9)
        << "peak bandwidth [GB/s] = memory clock [Hz] x 2 (double data rate) x bus width "
           "[bytes] / 1e9";
  }
}

TEST(DeviceQuery, ResidentWarpsPerSm) {
  for (int d = 0; d < device_count(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto q = query(d);
    EXPECT_EQ(q.summary.max_warps_per_sm, q.prop.maxThreadsPerMultiProcessor / q.prop.warpSize);
  }
}

TEST(DeviceQueryErrors, MissingDeviceIsReportedAndNotLeftPending) {
  for (int device : {device_count(), device_count() + 7, -1}) {
    SCOPED_TRACE("device " + std::to_string(device));
    DeviceSummary summary;
    const cudaError_t status = query_device(device, &summary);
    EXPECT_EQ(status, cudaErrorInvalidDevice)
        << "query_device returned " << cudaGetErrorName(status);
    const cudaError_t pending = cudaGetLastError();  // also clears it for the next case
    EXPECT_EQ(pending, cudaSuccess)
        << "an error was left pending: cudaGetLastError() gave " << cudaGetErrorName(pending);
  }
  // A failed query must not break the next one.
  DeviceSummary summary;
  EXPECT_EQ(query_device(0, &summary), cudaSuccess);
  int warp_size = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&warp_size, cudaDevAttrWarpSize, 0));
  EXPECT_EQ(summary.warp_size, warp_size);
}

}  // namespace
