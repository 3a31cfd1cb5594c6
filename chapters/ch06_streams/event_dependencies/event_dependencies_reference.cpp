#include "event_dependencies_reference.h"

#include "event_dependencies.h"

DagReference run_dag_reference(const std::vector<float>& x, const std::vector<float>& y) {
  DagReference out{std::vector<float>(x.size()), std::vector<float>(y.size()),
                   std::vector<float>(x.size())};
  for (std::size_t i = 0; i < x.size(); ++i) {
    out.a[i] = produce_a(x[i]);
    out.b[i] = produce_b(y[i]);
    out.c[i] = consume(out.a[i], out.b[i]);
  }
  return out;
}
