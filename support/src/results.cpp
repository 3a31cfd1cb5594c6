#include "course/results.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace course {

namespace {

std::string take_nonce() {
  const char* variable = std::getenv("COURSE_NONCE_FILE");
  if (variable == nullptr) return {};
  const std::string path = variable;
  std::string nonce;
  {
    std::ifstream file(path);
    std::getline(file, nonce);
  }
  std::remove(path.c_str());
  unsetenv("COURSE_NONCE_FILE");
  return nonce;
}

struct Nonce {
  std::string value = take_nonce();
};

// Priority 101, the first a program may use: read before the constructors of ordinary
// priority, student code's included.
Nonce run_nonce __attribute__((init_priority(101)));

}  // namespace

const std::string& results_nonce() { return run_nonce.value; }

}  // namespace course
