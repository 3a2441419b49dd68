// The kernels the `kernels` test program launches by name: each source of the program registers
// its own launchers (a `name<<<blockDim, nullptr, stream>>>(buffers...)` each) at static
// initialization; kernels.cpp holds the table and the host main.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl.h"

using Launcher = std::function<void(std::vector<uint8_t*>&, uint32_t, aclrtStream)>;
using KernelTable = std::map<std::string, Launcher>;

KernelTable& Kernels();

struct RegisterKernels {
  RegisterKernels(std::initializer_list<std::pair<const std::string, Launcher>> launchers) {
    Kernels().insert(launchers);
  }
};
