// Vector-unit instructions on local tensors. Arithmetic runs in fp32 and is
// rounded back to T, as the vector unit computes fp16/bf16 with fp32 internals.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace AscendC {

template <typename T, typename F>
inline void TwinMap1(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t n, const char* op, F f) {
  TwinCheckRange(dst, n, op);
  TwinCheckRange(src, n, op);
  for (uint32_t i = 0; i < n; ++i) dst.SetValue(i, T(f(static_cast<float>(src.GetValue(i)))));
}

template <typename T, typename F>
inline void TwinMap2(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, uint32_t n,
                     const char* op, F f) {
  TwinCheckRange(dst, n, op);
  TwinCheckRange(a, n, op);
  TwinCheckRange(b, n, op);
  for (uint32_t i = 0; i < n; ++i)
    dst.SetValue(i, T(f(static_cast<float>(a.GetValue(i)), static_cast<float>(b.GetValue(i)))));
}

#define TWIN_BINARY(NAME, EXPR)                                                                            \
  template <typename T>                                                                                    \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, uint32_t n) { \
    TwinMap2(dst, a, b, n, #NAME, [](float x, float y) { return EXPR; });                                 \
  }
TWIN_BINARY(Add, x + y)
TWIN_BINARY(Sub, x - y)
TWIN_BINARY(Mul, x * y)
TWIN_BINARY(Div, x / y)
TWIN_BINARY(Max, std::max(x, y))
TWIN_BINARY(Min, std::min(x, y))
#undef TWIN_BINARY

#define TWIN_UNARY(NAME, EXPR)                                                          \
  template <typename T>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t n) { \
    TwinMap1(dst, src, n, #NAME, [](float x) { return EXPR; });                        \
  }
TWIN_UNARY(Exp, std::exp(x))
TWIN_UNARY(Ln, std::log(x))
TWIN_UNARY(Abs, std::fabs(x))
TWIN_UNARY(Sqrt, std::sqrt(x))
TWIN_UNARY(Rsqrt, 1.0f / std::sqrt(x))
TWIN_UNARY(Reciprocal, 1.0f / x)
TWIN_UNARY(Relu, std::max(x, 0.0f))
TWIN_UNARY(Tanh, std::tanh(x))
#undef TWIN_UNARY

#define TWIN_SCALAR(NAME, EXPR)                                                                  \
  template <typename T>                                                                          \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, T scalar, uint32_t n) { \
    float s = static_cast<float>(scalar);                                                        \
    TwinMap1(dst, src, n, #NAME, [s](float x) { return EXPR; });                                \
  }
TWIN_SCALAR(Adds, x + s)
TWIN_SCALAR(Muls, x * s)
TWIN_SCALAR(Maxs, std::max(x, s))
TWIN_SCALAR(Mins, std::min(x, s))
#undef TWIN_SCALAR

template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, T scalar, uint32_t n) {
  TwinCheckRange(dst, n, "Duplicate");
  for (uint32_t i = 0; i < n; ++i) dst.SetValue(i, scalar);
}

enum class RoundMode { CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC };

template <typename D, typename S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, RoundMode mode, uint32_t n) {
  TwinCheckRange(dst, n, "Cast");
  TwinCheckRange(src, n, "Cast");
  for (uint32_t i = 0; i < n; ++i) {
    float x = static_cast<float>(src.GetValue(i));
    switch (mode) {
      case RoundMode::CAST_FLOOR: x = std::floor(x); break;
      case RoundMode::CAST_CEIL: x = std::ceil(x); break;
      case RoundMode::CAST_ROUND: x = std::round(x); break;
      case RoundMode::CAST_TRUNC: x = std::trunc(x); break;
      case RoundMode::CAST_RINT: x = std::is_floating_point_v<D> ? x : std::nearbyint(x); break;
      case RoundMode::CAST_NONE: break;
    }
    dst.SetValue(i, static_cast<D>(x));
  }
}

// Whole-vector reductions: the result lands in dst[0]; `work` is the scratch
// buffer the hardware needs for its pairwise passes (checked, not used).
#define TWIN_REDUCE(NAME, INIT, STEP)                                                                       \
  template <typename T>                                                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, uint32_t n) { \
    TwinCheckRange(src, n, #NAME);                                                                          \
    TwinCheckRange(dst, 1, #NAME);                                                                          \
    (void)work;                                                                                             \
    float acc = INIT;                                                                                       \
    for (uint32_t i = 0; i < n; ++i) {                                                                      \
      float x = static_cast<float>(src.GetValue(i));                                                        \
      acc = STEP;                                                                                           \
    }                                                                                                       \
    dst.SetValue(0, T(acc));                                                                                \
  }
TWIN_REDUCE(ReduceSum, 0.0f, acc + x)
TWIN_REDUCE(ReduceMax, -INFINITY, std::max(acc, x))
TWIN_REDUCE(ReduceMin, INFINITY, std::min(acc, x))
#undef TWIN_REDUCE

}  // namespace AscendC
