// CPU reference for run_dag: the three arrays it must leave behind.
#pragma once

#include <vector>

struct DagReference {
  std::vector<float> a, b, c;
};

DagReference run_dag_reference(const std::vector<float>& x, const std::vector<float>& y);
