#include "nn/cross_entropy.hpp"

#include <cmath>
#include <string>

#include "core/errors.hpp"

namespace sharp::nn {

template <class T>
CrossEntropyTotals cross_entropy_forward(T* probs, const T* logits, const std::int32_t* labels, std::size_t rows,
                                         std::size_t classes) {
  CrossEntropyTotals totals;
  for (std::size_t r = 0; r < rows; ++r) {
    const T* x = logits + r * classes;
    T* p = probs + r * classes;
    const std::int32_t label = labels[r];
    if (label < 0 || std::size_t(label) >= classes)
      throw BadInput("cross_entropy: label " + std::to_string(label) + " of row " + std::to_string(r) +
                     " is outside [0, " + std::to_string(classes) + ")");
    std::size_t best = 0;
    for (std::size_t c = 0; c < classes; ++c) {
      if (!std::isfinite(double(x[c])))
        throw NumericError("cross_entropy: non-finite logit in row " + std::to_string(r));
      if (x[c] > x[best]) best = c;
    }
    const double m = double(x[best]);
    double s = 0.0;
    for (std::size_t c = 0; c < classes; ++c) s += std::exp(double(x[c]) - m);
    const double log_s = std::log(s);
    for (std::size_t c = 0; c < classes; ++c) p[c] = T(std::exp(double(x[c]) - m - log_s));
    totals.loss_sum += m + log_s - double(x[label]);
    totals.correct += best == std::size_t(label);
  }
  return totals;
}

template <class T>
void cross_entropy_backward(T* dlogits, const T* probs, const std::int32_t* labels, std::size_t rows,
                            std::size_t classes, double scale) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* p = probs + r * classes;
    T* d = dlogits + r * classes;
    for (std::size_t c = 0; c < classes; ++c) d[c] = T(scale * double(p[c]));
    d[labels[r]] = T(scale * (double(p[labels[r]]) - 1.0));
  }
}

template CrossEntropyTotals cross_entropy_forward<float>(float*, const float*, const std::int32_t*, std::size_t,
                                                         std::size_t);
template CrossEntropyTotals cross_entropy_forward<double>(double*, const double*, const std::int32_t*, std::size_t,
                                                          std::size_t);
template void cross_entropy_backward<float>(float*, const float*, const std::int32_t*, std::size_t, std::size_t,
                                            double);
template void cross_entropy_backward<double>(double*, const double*, const std::int32_t*, std::size_t, std::size_t,
                                             double);

}  // namespace sharp::nn
