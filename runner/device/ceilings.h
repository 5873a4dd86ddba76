// Ceilings measured once when the runner starts, for get_gpu_specs and the
// speed-of-light figures: device-to-device copy bandwidth (bytes read plus
// bytes written) and FP32 FMA throughput; plus the vendor's datasheet peaks
// for GPUs we know, labelled as such.
//
// Thread safety: uses the context's stream; runner thread only.
#ifndef KBENCH_RUNNER_DEVICE_CEILINGS_H_
#define KBENCH_RUNNER_DEVICE_CEILINGS_H_

#include "absl/status/status.h"
#include "kbench/v1/report.pb.h"
#include "runner/device/device_context.h"

namespace kbench {

// Measures both ceilings and the launch-latency floor (an empty kernel
// timed with events; about 50 ms in all on an H200) and fills the
// measured_* and datasheet_* fields of `spec`.
absl::Status MeasureCeilings(DeviceContext* ctx, v1::GpuSpec* spec);

// Fills the datasheet fields from the GPU's name (H100 SXM/PCIe, H200);
// leaves them 0 for GPUs not in the table.
void FillDatasheetPeaks(v1::GpuSpec* spec);

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_CEILINGS_H_
