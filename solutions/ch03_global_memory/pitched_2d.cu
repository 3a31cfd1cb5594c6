#include "pitched_2d.h"

#include "course/check.h"

Pitched pitched_alloc(int width, int height) {
  Pitched p;
  // @begin-solution: cudaMallocPitch(&ptr, &pitch_bytes, width_in_bytes, height) chooses the
  // @hint: padded row length; fill in all four fields.
  void* ptr = nullptr;
  CUDA_CHECK(cudaMallocPitch(&ptr, &p.pitch_bytes, width * sizeof(float), height));
  p.ptr = static_cast<float*>(ptr);
  p.width = width;
  p.height = height;
  // @skeleton: (void)width; (void)height;
  // @end-solution
  return p;
}

void pitched_free(Pitched p) {
  // @begin-solution: cudaFree the pointer.
  CUDA_CHECK(cudaFree(p.ptr));
  // @skeleton: (void)p;
  // @end-solution
}

void pitched_upload(Pitched dst, const float* host, cudaStream_t stream) {
  // @begin-solution: cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width_in_bytes,
  // @hint: height, cudaMemcpyHostToDevice, stream). The packed host rows have a pitch of
  // @hint: width * sizeof(float).
  const std::size_t row_bytes = dst.width * sizeof(float);
  CUDA_CHECK(cudaMemcpy2DAsync(dst.ptr, dst.pitch_bytes, host, row_bytes, row_bytes, dst.height,
                               cudaMemcpyHostToDevice, stream));
  // @skeleton: (void)dst; (void)host; (void)stream;
  // @end-solution
}

void pitched_download(float* host, Pitched src, cudaStream_t stream) {
  // @begin-solution: The same call the other way round.
  const std::size_t row_bytes = src.width * sizeof(float);
  CUDA_CHECK(cudaMemcpy2DAsync(host, row_bytes, src.ptr, src.pitch_bytes, row_bytes, src.height,
                               cudaMemcpyDeviceToHost, stream));
  // @skeleton: (void)host; (void)src; (void)stream;
  // @end-solution
}

// A row of a pitched array: the pitch is in bytes, so step through a char pointer.
__device__ __forceinline__ const float* row_of(const Pitched& p, int r) {
  return reinterpret_cast<const float*>(reinterpret_cast<const char*>(p.ptr) + r * p.pitch_bytes);
}

__global__ void mirror_sum_kernel(Pitched in, Pitched out) {
  // @begin-solution: c from the x dimension, r from the y dimension; guard c < width and
  // @hint: r < height. Address row r as (char*)ptr + r * pitch_bytes (see row_of).
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (c >= in.width || r >= in.height) return;
  float* out_row =
      reinterpret_cast<float*>(reinterpret_cast<char*>(out.ptr) + r * out.pitch_bytes);
  out_row[c] = row_of(in, r)[in.width - 1 - c] + row_of(in, in.height - 1 - r)[c];
  // @skeleton: (void)in; (void)out;
  // @end-solution
}

void mirror_sum(Pitched in, Pitched out, cudaStream_t stream) {
  // @begin-solution: 32 x 8 blocks over (width, height); CUDA_CHECK_LAUNCH().
  const dim3 block(32, 8);
  const dim3 grid((in.width + block.x - 1) / block.x, (in.height + block.y - 1) / block.y);
  mirror_sum_kernel<<<grid, block, 0, stream>>>(in, out);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stream;
  // @end-solution
}
