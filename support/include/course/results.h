// The per-run nonce that marks results as the course harness's own.
//
// The grader writes a fresh random nonce to a file named by COURSE_NONCE_FILE. Before main,
// and before any constructor of ordinary priority, the harness reads it, deletes the file and
// removes the variable; every result line the test main streams and the benchmark's JSON carry
// it, and the grader ignores (and reports) results without it. Student code runs in the same
// process, so this is no wall against code that searches memory, but printed or written
// results cannot pass for the harness's, and the integrity stage rejects code that opens files.
#pragma once

#include <string>

namespace course {

// The nonce this run was given; empty when the program runs outside the grader.
const std::string& results_nonce();

}  // namespace course
