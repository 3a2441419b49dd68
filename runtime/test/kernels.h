// Kernels the runtime tests launch (the signature of compiled kernels: packed args, block index).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

// args: int32 milliseconds to sleep.
inline int32_t sleepKernel(const void* args, uint32_t, uint32_t) {
  int32_t ms;
  std::memcpy(&ms, args, sizeof(ms));
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return 0;
}

// Fails in block 1 with code 7.
inline int32_t failingKernel(const void*, uint32_t blockIdx, uint32_t) { return blockIdx == 1 ? 7 : 0; }

// args: pointer to an array of blockDim atomics; each block marks its own slot.
inline int32_t markBlockKernel(const void* args, uint32_t blockIdx, uint32_t) {
  std::atomic<int>* slots;
  std::memcpy(&slots, args, sizeof(slots));
  slots[blockIdx].fetch_add(1);
  return 0;
}

inline aclError launchSleep(aclrtStream stream, int32_t ms) {
  return aclrtLaunchKernel(sleepKernel, 1, &ms, sizeof(ms), "sleep", stream);
}
