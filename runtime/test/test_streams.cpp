// Streams: asynchronous FIFO execution, cross-stream ordering, the pool layout.
#include <atomic>
#include <mutex>
#include <vector>

#include "expect.h"
#include "kernels.h"

namespace {

aclrtStream stream(uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
  return s;
}

void slowTaskDoesNotBlockHost() {
  aclrtStream s = stream(1);
  auto start = std::chrono::steady_clock::now();
  EXPECT_OK(launchSleep(s, 300));
  EXPECT(secondsSince(start) < 0.1);
  int32_t done = 1;
  EXPECT_OK(aclrtStreamQuery(s, &done));
  EXPECT(done == 0);
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(secondsSince(start) >= 0.3);
  EXPECT_OK(aclrtStreamQuery(s, &done));
  EXPECT(done == 1);
}

struct OrderLog {
  std::mutex mutex;
  std::vector<int> seen;
};
struct OrderItem {
  OrderLog* log;
  int value;
};

int32_t appendValue(void* data) {
  auto* item = static_cast<OrderItem*>(data);
  std::lock_guard<std::mutex> lock(item->log->mutex);
  item->log->seen.push_back(item->value);
  return 0;
}

void tasksRunInFifoOrder() {
  aclrtStream s = stream(2);
  OrderLog log;
  std::vector<OrderItem> items;
  for (int i = 0; i < 200; ++i) items.push_back(OrderItem{&log, i});
  EXPECT_OK(launchSleep(s, 20));  // the queue fills up behind a slow head
  for (auto& item : items) EXPECT_OK(aclrtLaunchHostFunc(s, appendValue, &item));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(log.seen.size() == 200);
  for (int i = 0; i < 200; ++i) EXPECT(log.seen[i] == i);
}

std::atomic<int> producerDone{0};
int observedByConsumer = -1;

int32_t markProduced(void*) {
  producerDone = 1;
  return 0;
}
int32_t observe(void*) {
  observedByConsumer = producerDone.load();
  return 0;
}

void waitEventOrdersStreams() {
  aclrtStream producer = stream(3), consumer = stream(4);
  aclrtEvent event = nullptr;
  EXPECT_OK(aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
  EXPECT_OK(launchSleep(producer, 200));
  EXPECT_OK(aclrtLaunchHostFunc(producer, markProduced, nullptr));
  EXPECT_OK(aclrtRecordEvent(event, producer));
  EXPECT_OK(aclrtStreamWaitEvent(consumer, event));
  EXPECT_OK(aclrtLaunchHostFunc(consumer, observe, nullptr));
  EXPECT_OK(aclrtSynchronizeStream(consumer));
  EXPECT(observedByConsumer == 1);
  EXPECT_OK(aclrtDestroyEvent(event));
}

void blocksSpreadOverCorePool() {
  constexpr uint32_t kBlocks = 96;
  std::vector<std::atomic<int>> slots(kBlocks);
  std::atomic<int>* data = slots.data();
  EXPECT_OK(aclrtLaunchKernel(markBlockKernel, kBlocks, &data, sizeof(data), "mark", stream(5)));
  EXPECT_OK(aclrtSynchronizeStream(stream(5)));
  for (auto& slot : slots) EXPECT(slot.load() == 1);
}

void blocksRunConcurrently() {
  if (std::thread::hardware_concurrency() < 2) return;  // a one-core host has a one-thread pool
  aclrtStream s = stream(9);
  int32_t ms = 200;
  auto start = std::chrono::steady_clock::now();
  EXPECT_OK(aclrtLaunchKernel(sleepKernel, 2, &ms, sizeof(ms), "sleep2", s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  double elapsed = secondsSince(start);
  EXPECT(elapsed >= 0.2 && elapsed < 0.38);  // two blocks side by side, not one after the other
}

std::atomic<int32_t> argSeenByKernel{0};

int32_t recordArgKernel(const void* args, uint32_t, uint32_t) {
  int32_t value;
  std::memcpy(&value, args, sizeof(value));
  argSeenByKernel = value;
  return 0;
}

void launchCopiesArgs() {
  aclrtStream s = stream(6);
  EXPECT_OK(launchSleep(s, 50));  // the launch below is still queued when its args change
  int32_t value = 5;
  EXPECT_OK(aclrtLaunchKernel(recordArgKernel, 1, &value, sizeof(value), "record", s));
  value = 9;
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(argSeenByKernel == 5);
}

void copiesAndFillsRunOnStream() {
  aclrtStream s = stream(7);
  void* dev = nullptr;
  void* dev2 = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 4096, 0));
  EXPECT_OK(aclrtMalloc(&dev2, 4096, 0));
  std::vector<unsigned char> host(4096, 0), back(4096, 0);
  EXPECT_OK(aclrtMemsetAsync(dev, 4096, 0x5a, 4096, s));
  EXPECT_OK(aclrtMemcpyAsync(host.data(), 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  for (unsigned char byte : host) EXPECT(byte == 0x5a);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 7);
  EXPECT_OK(aclrtMemcpyAsync(dev, 4096, host.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
  EXPECT_OK(aclrtMemcpyAsync(dev2, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
  EXPECT_OK(aclrtMemcpyAsync(back.data(), 4096, dev2, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(back == host);
  EXPECT_OK(aclrtFree(dev));
  EXPECT_OK(aclrtFree(dev2));
}

void poolLayoutAndDefaultStream() {
  int32_t device = -1, priority = 7;
  uint32_t index = 99;
  EXPECT_OK(aclrtStreamGetInfo(stream(33), &device, &index, &priority));
  EXPECT(device == 0 && index == 33 && priority == -1);
  EXPECT_OK(aclrtStreamGetInfo(stream(32), &device, &index, &priority));
  EXPECT(index == 32 && priority == 0);
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtStreamGetInfo(nullptr, &device, &index, &priority));  // NULL: current device's default
  EXPECT(device == 1 && index == 0);
  EXPECT_OK(aclrtSetDevice(0));
}

void synchronizeDeviceWaitsForEveryStream() {
  auto start = std::chrono::steady_clock::now();
  EXPECT_OK(launchSleep(stream(8), 150));
  EXPECT_OK(launchSleep(stream(40), 150));
  EXPECT_OK(aclrtSynchronizeDevice());
  EXPECT(secondsSince(start) >= 0.15);
  int32_t done = 0;
  EXPECT_OK(aclrtStreamQuery(stream(8), &done));
  EXPECT(done == 1);
  EXPECT_OK(aclrtStreamQuery(stream(40), &done));
  EXPECT(done == 1);
}

}  // namespace

int main() {
  RUN(slowTaskDoesNotBlockHost);
  RUN(tasksRunInFifoOrder);
  RUN(waitEventOrdersStreams);
  RUN(blocksSpreadOverCorePool);
  RUN(blocksRunConcurrently);
  RUN(launchCopiesArgs);
  RUN(copiesAndFillsRunOnStream);
  RUN(poolLayoutAndDefaultStream);
  RUN(synchronizeDeviceWaitsForEveryStream);
  return 0;
}
