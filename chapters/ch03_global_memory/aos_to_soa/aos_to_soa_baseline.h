// Course-owned code the benchmark compares against; not part of the student's API.
#pragma once

#include <cuda_runtime.h>

#include "aos_to_soa.h"

// drift on the array of structures (aos_to_soa_baseline.cu): what the SoA version is measured
// against.
void drift_aos_baseline(Particle* aos, float dt, int n, cudaStream_t stream);
