// RUN: npu-opt --list-passes | FileCheck %s

// CHECK: --ascend-attach-target
// CHECK: chip=<value>
// CHECK: --ascend-raise-linalg
// CHECK: --ascend-assign-formats
// CHECK: --ascend-fuse
// CHECK: max-ops=<value>
// CHECK: --ascend-verify-host
// CHECK: --ascend-tile
// CHECK: --ascend-plan-memory
// CHECK: --ascend-lower-tiles
