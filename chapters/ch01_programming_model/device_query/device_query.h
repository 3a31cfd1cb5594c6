// Exercise ch01 / device_query: what the GPU is, what it can hold, and what that implies.
//
// Frozen API. query_device fills *summary for device `device` and returns cudaSuccess, or
// returns the runtime's error (cudaErrorInvalidDevice for a device that does not exist)
// and leaves *summary unspecified. Either way it leaves no error pending: cudaGetLastError()
// called afterwards returns cudaSuccess.
//
// Since CUDA 13, cudaDeviceProp no longer has clockRate or memoryClockRate: figures that left
// the struct are read with cudaDeviceGetAttribute (cudaDevAttrMemoryClockRate here).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

struct DeviceSummary {
  // Identity.
  std::string name;
  int major = 0;  // compute capability major.minor
  int minor = 0;
  // Execution resources.
  int sm_count = 0;
  int warp_size = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;  // resident blocks per SM, from the device
  int registers_per_sm = 0;   // 32-bit registers
  // Memory, in bytes unless the name says otherwise.
  std::size_t shared_memory_per_block = 0;        // without opting in
  std::size_t shared_memory_per_block_optin = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  std::size_t shared_memory_per_sm = 0;
  std::size_t global_memory = 0;
  int l2_cache = 0;
  int memory_bus_width_bits = 0;
  int memory_clock_khz = 0;  // peak memory clock, kHz
  // Derived figures.
  // Peak DRAM bandwidth in GB/s (10^9 bytes per second): the clock times two transfers per
  // cycle (double data rate) times the bus width in bytes.
  double peak_memory_bandwidth_gbps = 0.0;
  // Warps an SM can hold at once: max_threads_per_sm / warp_size.
  int max_warps_per_sm = 0;
};

cudaError_t query_device(int device, DeviceSummary* summary);
