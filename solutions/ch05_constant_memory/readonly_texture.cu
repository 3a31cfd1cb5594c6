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
  // @begin-solution: Read indices[i] and src[indices[i]] through the read-only path, so the
  // @hint: compiler emits LDG.E...CONSTANT: either load with __ldg(&p[k]), or declare the inputs
  // @hint: const float* __restrict__ / const int* __restrict__ and the output
  // @hint: float* __restrict__, which promises the compiler that nothing the kernel writes
  // @hint: aliases them. Loop i = global thread index; i < n; i += total threads (use 64-bit
  // @hint: arithmetic for i: n + the stride may pass 2^31).
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < static_cast<std::size_t>(n); i += stride)
    out[i] = __ldg(&src[__ldg(&indices[i])]);
  // @skeleton: (void)src; (void)indices; (void)out; (void)n;
  // @end-solution
}

void readonly_gather(const float* src, const int* indices, float* out, int n,
                     cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: Launch kGatherThreads threads per block and as many blocks as n needs, but
  // @hint: at most course::sm_count() * kGatherBlocksPerSm, on `stream`; then
  // @hint: CUDA_CHECK_LAUNCH().
  // n / kGatherThreads + 1 rounds up without overflowing int when n is close to 2^31.
  const int blocks = std::min(n / kGatherThreads + 1, course::sm_count() * kGatherBlocksPerSm);
  readonly_gather_kernel<<<blocks, kGatherThreads, 0, stream>>>(src, indices, out, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)src; (void)indices; (void)out; (void)stream;
  // @end-solution
}

// ---- Part 2: the texture resample -----------------------------------------------------------

// Owns a width x height cudaArray of floats: the opaque, 2D-tiled layout the texture unit
// reads. Freed in the destructor, so an exception thrown by a later CUDA_CHECK cannot leak it.
class FloatArray2D {
 public:
  FloatArray2D(int width, int height) {
    // @begin-solution: Allocate array_ with cudaMallocArray and a one-channel float format
    // @hint: (cudaCreateChannelDesc<float>()), wrapped in CUDA_CHECK.
    const cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
    CUDA_CHECK(cudaMallocArray(&array_, &format, static_cast<std::size_t>(width),
                               static_cast<std::size_t>(height)));
    // @skeleton: (void)width; (void)height;
    // @end-solution
  }
  ~FloatArray2D() {
    // @begin-solution: Free the array if there is one (never throw from a destructor).
    if (array_ != nullptr) cudaFreeArray(array_);
    // @end-solution
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
    // @begin-solution: Describe the resource (cudaResourceTypeArray, res.array.array = array) and
    // @hint: the sampling: addressMode[0] and [1] = address, filterMode = cudaFilterModeLinear,
    // @hint: readMode = cudaReadModeElementType, normalizedCoords = 1 (wrap only works with
    // @hint: normalised coordinates); zero-initialise both structs, then
    // @hint: CUDA_CHECK(cudaCreateTextureObject(&texture_, &resource, &sampling, nullptr)).
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = array;
    cudaTextureDesc sampling{};
    sampling.addressMode[0] = address;
    sampling.addressMode[1] = address;
    sampling.filterMode = cudaFilterModeLinear;
    sampling.readMode = cudaReadModeElementType;
    sampling.normalizedCoords = 1;  // [0, 1) spans the image; cudaAddressModeWrap needs it
    CUDA_CHECK(cudaCreateTextureObject(&texture_, &resource, &sampling, nullptr));
    // @skeleton: (void)array; (void)address;
    // @end-solution
  }
  ~LinearTexture() {
    // @begin-solution: Destroy the texture object if there is one (0 means none).
    if (texture_ != 0) cudaDestroyTextureObject(texture_);
    // @end-solution
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
  // @begin-solution: For every output pixel (x, y) of this thread (grid-stride loops over y and
  // @hint: x), sample tex2D<float>(image, u, v) at u = (x + 0.5f) / out_width,
  // @hint: v = (y + 0.5f) / out_height and store it at out[y * out_width + x] (64-bit index).
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < out_height;
       y += blockDim.y * gridDim.y) {
    const float v = (static_cast<float>(y) + 0.5f) / static_cast<float>(out_height);
    for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < out_width;
         x += blockDim.x * gridDim.x) {
      const float u = (static_cast<float>(x) + 0.5f) / static_cast<float>(out_width);
      out[static_cast<std::size_t>(y) * out_width + x] = tex2D<float>(image, u, v);
    }
  }
  // @skeleton: (void)image; (void)out; (void)out_width; (void)out_height;
  // @end-solution
}

void texture_resample(const float* image, int width, int height, float* out, int out_width,
                      int out_height, ResampleAddress address, cudaStream_t stream) {
  if (out_width <= 0 || out_height <= 0) return;
  // @begin-solution: Make a FloatArray2D of width x height, copy the image into it on `stream`
  // @hint: (cudaMemcpy2DToArrayAsync: source pitch and row width are both width * sizeof(float),
  // @hint: cudaMemcpyDeviceToDevice), make a LinearTexture over it with cudaAddressModeClamp or
  // @hint: cudaAddressModeWrap, launch texture_resample_kernel on `stream` with
  // @hint: kResampleBlockX x kResampleBlockY blocks covering the output (grid.y at most
  // @hint: kMaxGridY), CUDA_CHECK_LAUNCH(), and wait for `stream` before the texture and the array
  // @hint: go out of scope: their destructors must not run while the kernel reads them.
  const FloatArray2D array(width, height);
  const std::size_t row_bytes = static_cast<std::size_t>(width) * sizeof(float);
  CUDA_CHECK(cudaMemcpy2DToArrayAsync(array.get(), 0, 0, image, row_bytes, row_bytes,
                                      static_cast<std::size_t>(height),
                                      cudaMemcpyDeviceToDevice, stream));
  const LinearTexture texture(array.get(), address == ResampleAddress::kWrap
                                               ? cudaAddressModeWrap
                                               : cudaAddressModeClamp);
  const dim3 block(kResampleBlockX, kResampleBlockY);
  const dim3 grid((out_width + kResampleBlockX - 1) / kResampleBlockX,
                  std::min((out_height + kResampleBlockY - 1) / kResampleBlockY, kMaxGridY));
  texture_resample_kernel<<<grid, block, 0, stream>>>(texture.get(), out, out_width, out_height);
  CUDA_CHECK_LAUNCH();
  // The kernel reads the texture and the array until it ends; both are destroyed on return.
  CUDA_CHECK(cudaStreamSynchronize(stream));
  // @skeleton: (void)image; (void)width; (void)height; (void)out; (void)address; (void)stream;
  // @end-solution
}
