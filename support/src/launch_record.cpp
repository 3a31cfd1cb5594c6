// Which kernels a test run launches from the host, for the grader's technique rules: a rule
// counts only kernels the exercise's code really launches (grader/stages/technique.py).
//
// Every test binary is linked with --wrap for the runtime's launch entry points (meson.build,
// launch_wrap_args): the code nvcc generates for `kernel<<<...>>>` (CUDA 12.8+: __cudaGetKernel
// once per launch site, then __cudaLaunchKernel), cudaLaunchKernel, cudaLaunchKernelEx,
// cooperative launches, and kernel nodes added to a graph by hand; graph instantiations are
// counted the same way (graph_instantiations). Each launch wrapper notes the
// kernel's name (cudaFuncGetName) and calls the real function; the test main reports the names
// in its nonce-marked event stream (gpu_test_main.cpp). Course kernels are noted too: the
// grader looks only at the student's.
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "course/launch_record.h"

namespace {

struct Record {
  std::mutex mutex;
  std::unordered_map<const void*, std::string> names;  // host function or kernel handle
  std::set<std::string> launched;
  std::vector<std::string> unreported;
};

std::atomic<std::size_t> instantiations{0};

Record& record() {
  static Record* instance = new Record();  // never destroyed: launches may come at exit
  return *instance;
}

std::string name_of_function(const void* function) {
  const char* name = nullptr;
  if (function == nullptr || cudaFuncGetName(&name, function) != cudaSuccess || name == nullptr) {
    cudaGetLastError();  // a failed lookup must not look like the student's launch error
    return "";
  }
  return name;
}

void note(const std::string& name) {
  if (name.empty()) return;
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.launched.insert(name).second) r.unreported.push_back(name);
}

void note_function(const void* function) {
  Record& r = record();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto found = r.names.find(function);
    if (found != r.names.end()) {
      if (r.launched.insert(found->second).second) r.unreported.push_back(found->second);
      return;
    }
  }
  std::string name = name_of_function(function);
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.names.emplace(function, name);
  }
  note(name);
}

void note_handle(const void* handle) {
  Record& r = record();
  std::string name;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto found = r.names.find(handle);
    if (found == r.names.end()) return;  // a handle not from __cudaGetKernel: nothing known
    name = found->second;
  }
  note(name);
}

}  // namespace

namespace course {

std::vector<std::string> take_unreported_launches() {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> out;
  out.swap(r.unreported);
  return out;
}

std::size_t graph_instantiations() { return instantiations.load(); }

}  // namespace course

// The wrapped entry points. The __real_ names are resolved by the linker to the runtime's own.
extern "C" {

cudaError_t __real___cudaGetKernel(cudaKernel_t*, const void*);
cudaError_t __real___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void**, size_t,
                                           cudaStream_t);
cudaError_t __real_cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t __real_cudaLaunchKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t __real_cudaLaunchKernelExC(const cudaLaunchConfig_t*, const void*, void**);
cudaError_t __real_cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t*, const void*, void**);
cudaError_t __real_cudaLaunchCooperativeKernel(const void*, dim3, dim3, void**, size_t,
                                               cudaStream_t);
cudaError_t __real_cudaLaunchCooperativeKernel_ptsz(const void*, dim3, dim3, void**, size_t,
                                                    cudaStream_t);
cudaError_t __real_cudaGraphAddKernelNode(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                          size_t, const cudaKernelNodeParams*);
cudaError_t __real_cudaGraphKernelNodeSetParams(cudaGraphNode_t, const cudaKernelNodeParams*);
cudaError_t __real_cudaGraphExecKernelNodeSetParams(cudaGraphExec_t, cudaGraphNode_t,
                                                    const cudaKernelNodeParams*);
cudaError_t __real_cudaGraphInstantiate(cudaGraphExec_t*, cudaGraph_t, unsigned long long);
cudaError_t __real_cudaGraphInstantiateWithFlags(cudaGraphExec_t*, cudaGraph_t,
                                                 unsigned long long);
cudaError_t __real_cudaGraphInstantiateWithParams(cudaGraphExec_t*, cudaGraph_t,
                                                  cudaGraphInstantiateParams*);
cudaError_t __real_cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t*, cudaGraph_t,
                                                       cudaGraphInstantiateParams*);

cudaError_t __wrap___cudaGetKernel(cudaKernel_t* kernel, const void* function) {
  cudaError_t status = __real___cudaGetKernel(kernel, function);
  if (status == cudaSuccess && kernel != nullptr) {
    std::string name = name_of_function(function);
    Record& r = record();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.names[static_cast<const void*>(*kernel)] = name;
  }
  return status;
}

cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                      size_t shared, cudaStream_t stream) {
  note_handle(kernel);
  return __real___cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block,
                                           void** args, size_t shared, cudaStream_t stream) {
  note_handle(kernel);
  return __real___cudaLaunchKernel_ptsz(kernel, grid, block, args, shared, stream);
}

cudaError_t __wrap_cudaLaunchKernel(const void* function, dim3 grid, dim3 block, void** args,
                                    size_t shared, cudaStream_t stream) {
  note_function(function);
  return __real_cudaLaunchKernel(function, grid, block, args, shared, stream);
}

cudaError_t __wrap_cudaLaunchKernel_ptsz(const void* function, dim3 grid, dim3 block,
                                         void** args, size_t shared, cudaStream_t stream) {
  note_function(function);
  return __real_cudaLaunchKernel_ptsz(function, grid, block, args, shared, stream);
}

cudaError_t __wrap_cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* function,
                                       void** args) {
  note_function(function);
  return __real_cudaLaunchKernelExC(config, function, args);
}

cudaError_t __wrap_cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config,
                                            const void* function, void** args) {
  note_function(function);
  return __real_cudaLaunchKernelExC_ptsz(config, function, args);
}

cudaError_t __wrap_cudaLaunchCooperativeKernel(const void* function, dim3 grid, dim3 block,
                                               void** args, size_t shared, cudaStream_t stream) {
  note_function(function);
  return __real_cudaLaunchCooperativeKernel(function, grid, block, args, shared, stream);
}

cudaError_t __wrap_cudaLaunchCooperativeKernel_ptsz(const void* function, dim3 grid, dim3 block,
                                                    void** args, size_t shared,
                                                    cudaStream_t stream) {
  note_function(function);
  return __real_cudaLaunchCooperativeKernel_ptsz(function, grid, block, args, shared, stream);
}

cudaError_t __wrap_cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                          const cudaGraphNode_t* dependencies, size_t count,
                                          const cudaKernelNodeParams* params) {
  if (params != nullptr) note_function(params->func);
  return __real_cudaGraphAddKernelNode(node, graph, dependencies, count, params);
}

cudaError_t __wrap_cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                const cudaKernelNodeParams* params) {
  if (params != nullptr) note_function(params->func);
  return __real_cudaGraphKernelNodeSetParams(node, params);
}

cudaError_t __wrap_cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                    const cudaKernelNodeParams* params) {
  if (params != nullptr) note_function(params->func);
  return __real_cudaGraphExecKernelNodeSetParams(exec, node, params);
}

cudaError_t __wrap_cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                        unsigned long long flags) {
  ++instantiations;
  return __real_cudaGraphInstantiate(exec, graph, flags);
}

cudaError_t __wrap_cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                 unsigned long long flags) {
  ++instantiations;
  return __real_cudaGraphInstantiateWithFlags(exec, graph, flags);
}

cudaError_t __wrap_cudaGraphInstantiateWithParams(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                  cudaGraphInstantiateParams* params) {
  ++instantiations;
  return __real_cudaGraphInstantiateWithParams(exec, graph, params);
}

cudaError_t __wrap_cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                       cudaGraphInstantiateParams* params) {
  ++instantiations;
  return __real_cudaGraphInstantiateWithParams_ptsz(exec, graph, params);
}

}  // extern "C"
