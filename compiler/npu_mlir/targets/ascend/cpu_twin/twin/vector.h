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
// AscendC's high-level math APIs (lib/math): elementwise, fp32 inside.
TWIN_UNARY(Erf, std::erf(x))
TWIN_UNARY(Sin, std::sin(x))
TWIN_UNARY(Cos, std::cos(x))
TWIN_UNARY(Floor, std::floor(x))
TWIN_UNARY(Ceil, std::ceil(x))
TWIN_UNARY(Round, std::nearbyint(x))
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

namespace AscendC {

// Compare writes a bit mask (bit i of byte i / 8) that Select reads, as the vector unit does.
enum class CMPMODE { LT, GT, EQ, LE, GE, NE };
enum class SELMODE { VSEL_CMPMASK_SPR, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

inline bool TwinCompare(float x, float y, CMPMODE mode) {
  switch (mode) {
    case CMPMODE::LT: return x < y;
    case CMPMODE::GT: return x > y;
    case CMPMODE::EQ: return x == y;
    case CMPMODE::LE: return x <= y;
    case CMPMODE::GE: return x >= y;
    case CMPMODE::NE: return x != y;
  }
  return false;
}

template <typename T, typename Y>
inline void TwinCompareInto(const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a, uint32_t n, CMPMODE mode, Y y) {
  TwinCheckRange(a, n, "Compare");
  TwinCheckRange(dst, (n + 7) / 8, "Compare mask");
  for (uint32_t i = 0; i < (n + 7) / 8; ++i) dst.SetValue(i, 0);
  for (uint32_t i = 0; i < n; ++i)
    if (TwinCompare(static_cast<float>(a.GetValue(i)), y(i), mode))
      dst.SetValue(i / 8, static_cast<uint8_t>(dst.GetValue(i / 8) | (1u << (i % 8))));
}

template <typename T>
inline void Compare(const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, CMPMODE mode,
                    uint32_t n) {
  TwinCheckRange(b, n, "Compare");
  TwinCompareInto(dst, a, n, mode, [&b](uint32_t i) { return static_cast<float>(b.GetValue(i)); });
}

template <typename T>
inline void CompareScalar(const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a, T scalar, CMPMODE mode,
                          uint32_t n) {
  float s = static_cast<float>(scalar);
  TwinCompareInto(dst, a, n, mode, [s](uint32_t) { return s; });
}

template <typename T>
inline bool TwinMaskBit(const LocalTensor<uint8_t>& mask, uint32_t i) { return (mask.GetValue(i / 8) >> (i % 8)) & 1u; }

template <typename T>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<uint8_t>& mask, const LocalTensor<T>& a,
                   const LocalTensor<T>& b, SELMODE mode, uint32_t n) {
  if (mode != SELMODE::VSEL_TENSOR_TENSOR_MODE) TwinFail("Select of two tensors needs VSEL_TENSOR_TENSOR_MODE");
  TwinCheckRange(dst, n, "Select");
  TwinCheckRange(mask, (n + 7) / 8, "Select mask");
  for (uint32_t i = 0; i < n; ++i) dst.SetValue(i, TwinMaskBit<T>(mask, i) ? a.GetValue(i) : b.GetValue(i));
}

template <typename T>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<uint8_t>& mask, const LocalTensor<T>& a, T scalar,
                   SELMODE mode, uint32_t n) {
  if (mode != SELMODE::VSEL_TENSOR_SCALAR_MODE) TwinFail("Select of a tensor and a scalar needs VSEL_TENSOR_SCALAR_MODE");
  TwinCheckRange(dst, n, "Select");
  TwinCheckRange(mask, (n + 7) / 8, "Select mask");
  for (uint32_t i = 0; i < n; ++i) dst.SetValue(i, TwinMaskBit<T>(mask, i) ? a.GetValue(i) : scalar);
}

}  // namespace AscendC
