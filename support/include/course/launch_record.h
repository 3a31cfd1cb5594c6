// The kernels a test binary launched from the host (support/src/launch_record.cpp): the
// runtime's launch entry points are wrapped at link time in every test binary.
#pragma once

#include <string>
#include <vector>

namespace course {

// Names (as cudaFuncGetName gives them) of kernels launched since the last call, each once per
// run: the test main reports them in its event stream after each case.
std::vector<std::string> take_unreported_launches();

}  // namespace course
