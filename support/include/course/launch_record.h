// The kernels a test binary launched from the host (support/src/launch_record.cpp): the
// runtime's launch entry points are wrapped at link time in every test binary.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace course {

// Names (as cudaFuncGetName gives them) of kernels launched since the last call, each once per
// run: the test main reports them in its event stream after each case.
std::vector<std::string> take_unreported_launches();

// Executable graphs instantiated so far (cudaGraphInstantiate and its variants, wrapped the
// same way): a test of code that must update one graph in place checks that a step adds none.
// A graph exec handle cannot show it, since a destroyed exec's address may be handed out again.
std::size_t graph_instantiations();

}  // namespace course
