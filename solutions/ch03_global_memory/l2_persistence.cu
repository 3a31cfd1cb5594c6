#include "l2_persistence.h"

#include <algorithm>

#include "course/check.h"

void enable_persistence(cudaStream_t stream, const void* hot, std::size_t hot_bytes) {
  // @begin-solution: Read cudaDevAttrMaxPersistingL2CacheSize and
  // @hint: cudaDevAttrMaxAccessPolicyWindowSize with cudaDeviceGetAttribute. Reserve
  // @hint: min(hot_bytes, max persisting) with cudaDeviceSetLimit, then fill a
  // @hint: cudaStreamAttrValue's accessPolicyWindow (base_ptr, num_bytes, hitRatio, hitProp,
  // @hint: missProp) and set it with cudaStreamSetAttribute.
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int max_persist = 0;
  int max_window = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
  const std::size_t set_aside = std::min(hot_bytes, static_cast<std::size_t>(max_persist));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
  std::size_t granted = 0;  // the driver may round the request
  CUDA_CHECK(cudaDeviceGetLimit(&granted, cudaLimitPersistingL2CacheSize));

  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = const_cast<void*>(hot);
  value.accessPolicyWindow.num_bytes = std::min(hot_bytes, static_cast<std::size_t>(max_window));
  // Only the fraction of the window that fits the set-aside is marked persisting; the rest
  // streams, instead of persisting lines evicting each other.
  value.accessPolicyWindow.hitRatio = static_cast<float>(std::min(
      1.0, static_cast<double>(std::min(granted, set_aside)) /
               static_cast<double>(value.accessPolicyWindow.num_bytes)));
  value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  // @skeleton: (void)stream; (void)hot; (void)hot_bytes;
  // @end-solution
}

void disable_persistence(cudaStream_t stream) {
  // @begin-solution: cudaStreamSynchronize(stream) first. Then a window with num_bytes = 0 on
  // @hint: the stream, cudaCtxResetPersistingL2Cache(), and
  // @hint: cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0).
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.num_bytes = 0;
  CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
  // @skeleton: (void)stream;
  // @end-solution
}
