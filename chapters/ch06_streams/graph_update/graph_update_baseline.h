// Course-owned code the graph_update benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "graph_update.h"

// One step the way a program pays for it when it never updates a graph: a new graph of the
// step's three kernel nodes (the course's own copies of the kernels, with the solution's launch
// shape), instantiated, launched on `stream`, then the executable graph and the graph destroyed
// (the launch still runs; the runtime frees them once it is done). Returns without waiting.
void pipeline_step_reinstantiated(const StepParams& params, std::size_t n, cudaStream_t stream);

// The other way to update in place, measured for calibration and scored nowhere: an executable
// graph instantiated once, and before each launch a new graph of the step built and handed to
// cudaGraphExecUpdate (whole-graph update), then destroyed.
struct CourseUpdatedGraph {
  cudaGraphExec_t exec = nullptr;
  std::size_t n = 0;
};
CourseUpdatedGraph course_updated_graph(const StepParams& first, std::size_t n,
                                        cudaStream_t stream);
void course_updated_graph_step(CourseUpdatedGraph& g, const StepParams& params,
                               cudaStream_t stream);
void course_updated_graph_destroy(CourseUpdatedGraph& g);
