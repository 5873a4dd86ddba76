#include "runner/reference/lt_util.h"

#include <cublas_v2.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/problem_util.h"

namespace kbench {

absl::Status LtCheck(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      "cuBLAS: ", cublasGetStatusName(s), " (", static_cast<int>(s),
      "): ", cublasGetStatusString(s), ", while ", what));
}

absl::StatusOr<cudaDataType_t> CudaType(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_FP32:
      return CUDA_R_32F;
    case v1::DTYPE_BF16:
      return CUDA_R_16BF;
    case v1::DTYPE_FP16:
      return CUDA_R_16F;
    default:
      return absl::UnimplementedError(absl::StrCat(
          "no cuBLASLt matmul in ", DTypeShortName(dtype), " here"));
  }
}

absl::StatusOr<cublasLtMatmulAlgo_t> ChooseAlgo(DeviceContext* ctx,
                                                cublasLtMatmulDesc_t op,
                                                cublasLtMatrixLayout_t a,
                                                cublasLtMatrixLayout_t b,
                                                cublasLtMatrixLayout_t d) {
  cublasLtMatmulPreference_t pref = nullptr;
  RETURN_IF_ERROR(LtCheck(cublasLtMatmulPreferenceCreate(&pref),
                          "creating a matmul preference"));
  const size_t ws = ctx->lt_workspace_bytes();
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(
      ctx->cublaslt(), op, a, b, d, d, pref, 1, &heuristic, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  RETURN_IF_ERROR(LtCheck(hs, "choosing a cuBLASLt algorithm"));
  if (found == 0) {
    return absl::InternalError("cuBLASLt found no algorithm for the matmul");
  }
  return heuristic.algo;
}

LaunchCount CountLaunches(DeviceContext* ctx,
                          const std::function<absl::Status()>& run) {
  cudaStream_t s = ctx->stream();
  cudaGraph_t graph = nullptr;
  LaunchCount count;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) ==
      cudaSuccess) {
    const absl::Status ran = run();
    if (cudaStreamEndCapture(s, &graph) == cudaSuccess && ran.ok() && graph) {
      size_t n = 0;
      cudaGraphGetNodes(graph, nullptr, &n);
      std::vector<cudaGraphNode_t> nodes(n);
      cudaGraphGetNodes(graph, nodes.data(), &n);
      for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type;
        cudaGraphNodeGetType(node, &type);
        if (type == cudaGraphNodeTypeKernel) ++count.kernels;
        if (type == cudaGraphNodeTypeMemset) ++count.memsets;
      }
    }
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGetLastError();  // A failed capture must not poison later calls.
  return count;
}

}  // namespace kbench
