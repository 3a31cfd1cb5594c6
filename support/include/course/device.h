// Facts about the current device that launchers size their grids by.
#pragma once

namespace course {

// Streaming multiprocessors of the current device, asked once per device and remembered:
// grid-stride kernels launch a small multiple of this many blocks.
int sm_count();

}  // namespace course
