#include "course/testing.h"

namespace course::testing {

std::mt19937_64 case_rng() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string salt = "no-test";
  if (info != nullptr) salt = std::string(info->test_suite_name()) + "." + info->name();
  return make_rng(salt);
}

std::vector<std::size_t> adversarial_sizes() {
  return {1, 7, 31, 32, 33, 65, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025,
          4097, 65537, 1000003};
}

}  // namespace course::testing
