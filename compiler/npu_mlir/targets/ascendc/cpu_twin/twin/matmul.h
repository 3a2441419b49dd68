// High-level Matmul API (AscendC's matmul::Matmul, "lib/matmul_intf.h"), as CANN documents it:
//   using aType = matmul::MatmulType<TPosition::GM, CubeFormat::ND, half>;   // (..., bool isTrans)
//   matmul::Matmul<aType, bType, cType, biasType> mm;
//   REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);   // or mm.Init(&tiling, &pipe)
//   mm.SetTensorA(aGm, isTransA); mm.SetTensorB(bGm, isTransB); mm.SetBias(biasGm);
//   mm.IterateAll(cGm);                      // or: while (mm.Iterate()) mm.GetTensorC(cGm);
//   mm.End();
// The tiling (TCubeTiling, filled by the host's MatmulApiTiling) gives the whole problem (M, N, Ka,
// Kb), this core's part (singleCoreM/N/K) and the base block each Iterate produces (baseM x baseN);
// SetOrgShape / SetSingleShape / SetTail override them as in AscendC.
//
// The twin computes what the library's cube path computes: products of A and B summed in float32
// (int32 for int8), plus the bias, converted once to C's type; A, B and bias are read from GM on
// MTE2 and C written on FIX, so the pipe checker sees the library's traffic. Inputs from GM in ND
// layout are modelled (the library's common case); NZ inputs, VECCALC/TSCM positions and the
// quantization setters are refused with a located error rather than computed wrongly. In a mix
// kernel the real library ships each call from the vector core to its cube core; the twin computes
// it on the calling core, which gives the same numbers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace AscendC {

enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class LayoutMode { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };

// The host-side tiling structure (TCubeTiling in the kernel's tiling data), in CANN's member order.
struct TCubeTiling {
  int32_t usedCoreNum = 0;
  int32_t M = 0;
  int32_t N = 0;
  int32_t Ka = 0;
  int32_t Kb = 0;
  int32_t singleCoreM = 0;
  int32_t singleCoreN = 0;
  int32_t singleCoreK = 0;
  int32_t baseM = 0;
  int32_t baseN = 0;
  int32_t baseK = 0;
  int32_t depthA1 = 0;
  int32_t depthB1 = 0;
  int32_t stepM = 0;
  int32_t stepN = 0;
  int32_t isBias = 0;
  int32_t transLength = 0;
  int32_t iterateOrder = 0;  // 0: along M first (next base block is below), 1: along N first
  int32_t shareMode = 0;
  int32_t shareL1Size = 0;
  int32_t shareL0CSize = 0;
  int32_t shareUbSize = 0;
  int32_t batchM = 0;
  int32_t batchN = 0;
  int32_t singleBatchM = 0;
  int32_t singleBatchN = 0;
  int32_t stepKa = 0;
  int32_t stepKb = 0;
  int32_t depthAL1CacheUB = 0;
  int32_t depthBL1CacheUB = 0;
  int32_t dbL0A = 0;
  int32_t dbL0B = 0;
  int32_t dbL0C = 0;
  int32_t ALayoutInfoB = 0;
  int32_t ALayoutInfoS = 0;
  int32_t ALayoutInfoN = 0;
  int32_t ALayoutInfoG = 0;
  int32_t ALayoutInfoD = 0;
  int32_t BLayoutInfoB = 0;
  int32_t BLayoutInfoS = 0;
  int32_t BLayoutInfoN = 0;
  int32_t BLayoutInfoG = 0;
  int32_t BLayoutInfoD = 0;
  int32_t CLayoutInfoB = 0;
  int32_t CLayoutInfoS1 = 0;
  int32_t CLayoutInfoN = 0;
  int32_t CLayoutInfoG = 0;
  int32_t CLayoutInfoS2 = 0;
  int32_t BatchNum = 0;
  int32_t reserved = 0;
};

// The kernel's system workspace (GetSysWorkSpacePtr): the twin's Matmul needs none of it.
inline GM_ADDR GetSysWorkSpacePtr() { return nullptr; }

}  // namespace AscendC

// CANN declares the high-level Matmul in namespace matmul (samples write matmul::Matmul) over AscendC's types.
namespace matmul {

using namespace AscendC;

template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
  constexpr static TPosition pos = POSITION;
  constexpr static CubeFormat format = FORMAT;
  using T = TYPE;
  constexpr static bool isTrans = ISTRANS;
  constexpr static LayoutMode layout = LAYOUT;
  constexpr static bool ibShare = IBSHARE;
};

struct MatmulConfig {
  bool doNorm = true;
  bool doBasicBlock = false;
  bool doMultiDataLoad = false;
  uint32_t basicM = 0, basicN = 0, basicK = 0;
  bool intrinsicsCheck = false;
  bool isNBatch = false;
  bool enVecND2NZ = false;
  bool doSpecialBasicBlock = false;
  uint32_t doMTE2Preload = 0;
};
constexpr MatmulConfig CFG_NORM = {};
constexpr MatmulConfig CFG_MDL = {false, false, true};
constexpr MatmulConfig CFG_IBSHARE_NORM = {};

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const MatmulConfig& MM_CFG = CFG_NORM>
class Matmul {
  using SrcT = typename A_TYPE::T;
  using DstT = typename C_TYPE::T;
  using BiasT = typename BIAS_TYPE::T;
  using Acc = std::conditional_t<std::is_integral_v<SrcT>, int32_t, float>;
  static_assert(std::is_same_v<SrcT, typename B_TYPE::T>, "Matmul: A and B have one dtype");

 public:
  void Init(const TCubeTiling* tiling, TPipe* tpipe = nullptr, TwinLoc loc = {}) {
    (void)tpipe;
    if (tiling == nullptr) TwinFailAt(loc, "Matmul::Init needs the TCubeTiling the host's tiling filled in");
    if (tiling->baseM <= 0 || tiling->baseN <= 0 || tiling->singleCoreM <= 0 || tiling->singleCoreN <= 0 ||
        tiling->singleCoreK <= 0)
      TwinFailAt(loc, "Matmul::Init: the TCubeTiling has no singleCoreM/N/K or baseM/N (was the host tiling run?)");
    tiling_ = *tiling;
    orgM_ = tiling->M, orgN_ = tiling->N, orgKa_ = tiling->Ka, orgKb_ = tiling->Kb;
    singleM_ = tiling->singleCoreM, singleN_ = tiling->singleCoreN, singleK_ = tiling->singleCoreK;
    inited_ = true;
  }
  void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK, orgN); }
  void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
    (void)orgKc;
    orgM_ = orgM, orgN_ = orgN, orgKa_ = orgKa, orgKb_ = orgKb;
  }
  void SetSingleShape(int singleM, int singleN, int singleK) { singleM_ = singleM, singleN_ = singleN, singleK_ = singleK; }
  void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
    if (tailM != -1) singleM_ = tailM;
    if (tailN != -1) singleN_ = tailN;
    if (tailK != -1) singleK_ = tailK;
  }
  void SetTensorA(const GlobalTensor<SrcT>& gm, bool isTransposeA = false, TwinLoc loc = {}) {
    CheckInput<A_TYPE>("SetTensorA", loc);
    a_ = gm, transA_ = isTransposeA, hasA_ = true;
  }
  void SetTensorB(const GlobalTensor<SrcT>& gm, bool isTransposeB = false, TwinLoc loc = {}) {
    CheckInput<B_TYPE>("SetTensorB", loc);
    b_ = gm, transB_ = isTransposeB, hasB_ = true;
  }
  void SetBias(const GlobalTensor<BiasT>& gm, TwinLoc loc = {}) {
    CheckInput<BIAS_TYPE>("SetBias", loc);
    bias_ = gm, hasBias_ = true;
  }
  void DisableBias() { hasBias_ = false; }
  void ClearBias() { hasBias_ = false; }
  template <typename U>
  void SetQuantScalar(U, TwinLoc loc = {}) { TwinFailAt(loc, "Matmul::SetQuantScalar is not modelled by the twin"); }

  // The whole singleCoreM x singleCoreN result into C (row stride N), base block by base block.
  template <bool sync = true>
  void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                  bool waitIterateAll = false, bool fakeMsg = false, TwinLoc loc = {}) {
    (void)waitIterateAll, (void)fakeMsg;
    while (Iterate<sync>(false, loc)) GetTensorC<sync>(gm, enAtomic, enSequentialWrite, loc);
  }

  // Compute the next baseM x baseN block of C; false once every block is done.
  template <bool sync = true>
  bool Iterate(bool enPartialSum = false, TwinLoc loc = {}) {
    if (enPartialSum) TwinFailAt(loc, "Matmul::Iterate with enPartialSum is not modelled by the twin");
    CheckReady("Iterate", loc);
    const int mBlocks = Ceil(singleM_, tiling_.baseM), nBlocks = Ceil(singleN_, tiling_.baseN);
    if (next_ >= mBlocks * nBlocks) {
      next_ = 0;
      return false;
    }
    // iterateOrder 0 walks down M first, 1 along N first (the library's ORDER_M / ORDER_N).
    blockM_ = tiling_.iterateOrder == 0 ? next_ % mBlocks : next_ / nBlocks;
    blockN_ = tiling_.iterateOrder == 0 ? next_ / mBlocks : next_ % nBlocks;
    ++next_;
    Compute(loc);
    return true;
  }

  // Write the last computed block of C at its place in the singleCoreM x singleCoreN result, whose
  // rows are N elements apart (enSequentialWrite: packed one block after the other instead).
  template <bool sync = true>
  void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false, TwinLoc loc = {}) {
    if (block_.empty()) TwinFailAt(loc, "Matmul::GetTensorC before Iterate computed a block");
    const uint64_t rowStride = enSequentialWrite ? static_cast<uint64_t>(rows_) : static_cast<uint64_t>(orgN_);
    twin::Op op(twin::FIX, loc, "Matmul GetTensorC");
    const uint64_t base = enSequentialWrite ? uint64_t(next_ - 1) * tiling_.baseM * tiling_.baseN
                                            : uint64_t(blockM_) * tiling_.baseM * orgN_ + uint64_t(blockN_) * tiling_.baseN;
    for (int i = 0; i < rows_; ++i) {
      DstT* row = gm.GetPhyAddr() + base + i * (enSequentialWrite ? cols_ : rowStride);
      op.WriteGm(row, uint64_t(cols_) * sizeof(DstT));
      for (int j = 0; j < cols_; ++j) {
        Acc v = block_[i * cols_ + j];
        if (enAtomic == 1) v += static_cast<Acc>(static_cast<float>(row[j]));
        DstT out = static_cast<DstT>(v);
        twin::GmStore(row + j, &out, 1);
      }
    }
  }

  void End() { hasA_ = hasB_ = hasBias_ = false, next_ = 0, block_.clear(); }

 private:
  static int Ceil(int a, int b) { return (a + b - 1) / b; }

  template <class TYPE>
  static void CheckInput(const char* what, const TwinLoc& loc) {
    if (TYPE::pos != TPosition::GM || (TYPE::format != CubeFormat::ND && TYPE::format != CubeFormat::VECTOR)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "Matmul::%s: the twin models GM inputs in ND layout (MatmulType<TPosition::GM, "
                                     "CubeFormat::ND, ...>)", what);
      TwinFailAt(loc, msg);
    }
  }

  void CheckReady(const char* what, const TwinLoc& loc) const {
    char msg[160];
    const char* missing = !inited_ ? "Init / REGIST_MATMUL_OBJ" : !hasA_ ? "SetTensorA" : !hasB_ ? "SetTensorB" : nullptr;
    if (missing) {
      std::snprintf(msg, sizeof msg, "Matmul::%s before %s", what, missing);
      TwinFailAt(loc, msg);
    }
    if (C_TYPE::pos != TPosition::GM || C_TYPE::format != CubeFormat::ND)
      TwinFailAt(loc, "Matmul: the twin models C in GM, ND layout (MatmulType<TPosition::GM, CubeFormat::ND, ...>)");
  }

  // One base block: rows [m0, m0 + rows) and columns [n0, n0 + cols) of this core's C.
  void Compute(const TwinLoc& loc) {
    const int m0 = blockM_ * tiling_.baseM, n0 = blockN_ * tiling_.baseN;
    rows_ = std::min(tiling_.baseM, singleM_ - m0), cols_ = std::min(tiling_.baseN, singleN_ - n0);
    const bool transA = transA_ || A_TYPE::isTrans, transB = transB_ || B_TYPE::isTrans;
    // A is [M, Ka] (or [Ka, M] transposed), B [Kb, N] (or [N, Kb]), row-major in GM.
    auto aAt = [&](int m, int k) { return transA ? uint64_t(k) * orgM_ + m : uint64_t(m) * orgKa_ + k; };
    auto bAt = [&](int k, int n) { return transB ? uint64_t(n) * orgKb_ + k : uint64_t(k) * orgN_ + n; };
    twin::Op in(twin::MTE2, loc, "Matmul Iterate (copy in)");
    for (int m = m0; m < m0 + rows_; ++m)
      for (int k = 0; k < singleK_; ++k) in.ReadGm(a_.GetPhyAddr() + aAt(m, k), sizeof(SrcT));
    for (int k = 0; k < singleK_; ++k)
      for (int n = n0; n < n0 + cols_; ++n) in.ReadGm(b_.GetPhyAddr() + bAt(k, n), sizeof(SrcT));
    if (hasBias_) in.ReadGm(bias_.GetPhyAddr() + n0, uint64_t(cols_) * sizeof(BiasT));
    block_.assign(size_t(rows_) * cols_, Acc(0));
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < cols_; ++j) {
        Acc acc = hasBias_ ? static_cast<Acc>(static_cast<float>(bias_.TwinGet(n0 + j))) : Acc(0);
        for (int k = 0; k < singleK_; ++k)
          acc += static_cast<Acc>(a_.TwinGet(aAt(m0 + i, k))) * static_cast<Acc>(b_.TwinGet(bAt(k, n0 + j)));
        block_[size_t(i) * cols_ + j] = acc;
      }
    }
  }

  TCubeTiling tiling_{};
  int orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0, singleM_ = 0, singleN_ = 0, singleK_ = 0;
  GlobalTensor<SrcT> a_, b_;
  GlobalTensor<BiasT> bias_;
  bool transA_ = false, transB_ = false, hasA_ = false, hasB_ = false, hasBias_ = false, inited_ = false;
  int next_ = 0, blockM_ = 0, blockN_ = 0, rows_ = 0, cols_ = 0;
  std::vector<Acc> block_;
};

}  // namespace matmul

namespace AscendC {
using matmul::Matmul;
using matmul::MatmulConfig;
using matmul::MatmulType;
}  // namespace AscendC

// REGIST_MATMUL_OBJ(&pipe, workspace, mm1, &tiling1[, mm2, &tiling2 ...]): Init each object with its tiling.
namespace AscendC::twin {
inline void RegistMatmul(TPipe*, GM_ADDR) {}
template <typename MM, typename... Rest>
inline void RegistMatmul(TPipe* pipe, GM_ADDR workspace, MM& mm, const TCubeTiling* tiling, Rest&&... rest) {
  mm.Init(tiling, pipe);
  RegistMatmul(pipe, workspace, rest...);
}
}  // namespace AscendC::twin
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) ::AscendC::twin::RegistMatmul(tpipe, workspace, __VA_ARGS__)
