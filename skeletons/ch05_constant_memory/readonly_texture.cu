#include "readonly_texture.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"

// ---- Part 1: the gather ---------------------------------------------------------------------

inline constexpr int kGatherThreads = 256;
inline constexpr int kGatherBlocksPerSm = 8;  // enough warps in flight to hide latency

// Grid-stride: any n fits, whatever the grid. You may add __restrict__ to the parameters.
__global__ void readonly_gather_kernel(const float* src, const int* indices, float* out, int n) {
  // TODO: Read indices[i] and src[indices[i]] through the read-only path, so the
  //       compiler emits LDG.E...CONSTANT: either load with __ldg(&p[k]), or declare the inputs
  //       const float* __restrict__ / const int* __restrict__ and the output
  //       float* __restrict__, which promises the compiler that nothing the kernel writes
  //       aliases them. Loop i = global thread index; i < n; i += total threads (use 64-bit
  //       arithmetic for i: n + the stride may pass 2^31).
  (void)src; (void)indices; (void)out; (void)n;
}

void readonly_gather(const float* src, const int* indices, float* out, int n,
                     cudaStream_t stream) {
  if (n <= 0) return;
  // TODO: Launch kGatherThreads threads per block and as many blocks as n needs, but
  //       at most course::sm_count() * kGatherBlocksPerSm, on `stream`; then
  //       CUDA_CHECK_LAUNCH().
  (void)src; (void)indices; (void)out; (void)stream;
}

// ---- Part 2: the texture resample -----------------------------------------------------------

// Owns a width x height cudaArray of floats: the opaque, 2D-tiled layout the texture unit
// reads. Freed in the destructor, so an exception thrown by a later CUDA_CHECK cannot leak it.
class FloatArray2D {
 public:
  FloatArray2D(int width, int height) {
    // TODO: Allocate array_ with cudaMallocArray and a one-channel float format
    //       (cudaCreateChannelDesc<float>()), wrapped in CUDA_CHECK.
    (void)width; (void)height;
  }
  ~FloatArray2D() {
    // TODO: Free the array if there is one (never throw from a destructor).
  }
  FloatArray2D(const FloatArray2D&) = delete;
  FloatArray2D& operator=(const FloatArray2D&) = delete;

  cudaArray_t get() const noexcept { return array_; }

 private:
  cudaArray_t array_ = nullptr;
};

// Owns a texture object over a whole array, sampled with bilinear filtering at normalised
// coordinates; destroyed in the destructor. It must not outlive the array it reads.
class LinearTexture {
 public:
  LinearTexture(cudaArray_t array, cudaTextureAddressMode address) {
    // TODO: Describe the resource (cudaResourceTypeArray, res.array.array = array) and
    //       the sampling: addressMode[0] and [1] = address, filterMode = cudaFilterModeLinear,
    //       readMode = cudaReadModeElementType, normalizedCoords = 1 (wrap only works with
    //       normalised coordinates); zero-initialise both structs, then
    //       CUDA_CHECK(cudaCreateTextureObject(&texture_, &resource, &sampling, nullptr)).
    (void)array; (void)address;
  }
  ~LinearTexture() {
    // TODO: Destroy the texture object if there is one (0 means none).
  }
  LinearTexture(const LinearTexture&) = delete;
  LinearTexture& operator=(const LinearTexture&) = delete;

  cudaTextureObject_t get() const noexcept { return texture_; }

 private:
  cudaTextureObject_t texture_ = 0;
};

// 32 x 8 threads: a warp covers 32 neighbouring pixels of a row, and a block eight rows, a
// 2D footprint the texture cache keeps.
inline constexpr int kResampleBlockX = 32;
inline constexpr int kResampleBlockY = 8;
inline constexpr int kMaxGridY = 65535;  // the hardware's limit on gridDim.y

// Grid-stride in both dimensions: out_height may need more than kMaxGridY rows of blocks.
__global__ void texture_resample_kernel(cudaTextureObject_t image, float* out, int out_width,
                                        int out_height) {
  // TODO: For every output pixel (x, y) of this thread (grid-stride loops over y and
  //       x), sample tex2D<float>(image, u, v) at u = (x + 0.5f) / out_width,
  //       v = (y + 0.5f) / out_height and store it at out[y * out_width + x] (64-bit index).
  (void)image; (void)out; (void)out_width; (void)out_height;
}

void texture_resample(const float* image, int width, int height, float* out, int out_width,
                      int out_height, ResampleAddress address, cudaStream_t stream) {
  if (out_width <= 0 || out_height <= 0) return;
  // TODO: Make a FloatArray2D of width x height, copy the image into it on `stream`
  //       (cudaMemcpy2DToArrayAsync: source pitch and row width are both width * sizeof(float),
  //       cudaMemcpyDeviceToDevice), make a LinearTexture over it with cudaAddressModeClamp or
  //       cudaAddressModeWrap, launch texture_resample_kernel on `stream` with
  //       kResampleBlockX x kResampleBlockY blocks covering the output (grid.y at most
  //       kMaxGridY), CUDA_CHECK_LAUNCH(), and wait for `stream` before the texture and the array
  //       go out of scope: their destructors must not run while the kernel reads them.
  (void)image; (void)width; (void)height; (void)out; (void)address; (void)stream;
}
