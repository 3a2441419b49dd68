// The runtime tests' only check: works under NDEBUG (RelWithDebInfo) and prints
// the runtime's last error message, which is what one needs when a call fails.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "npurt/acl_rt.h"

#define EXPECT(cond)                                                                                 \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      std::fprintf(stderr, "%s:%d: EXPECT(%s) failed (recent runtime error: %s)\n", __FILE__, __LINE__, \
                   #cond, aclGetRecentErrMsg());                                                     \
      std::abort();                                                                                  \
    }                                                                                                \
  } while (0)

#define EXPECT_OK(expr) EXPECT((expr) == ACL_SUCCESS)

// Each test is a function; RUN prints its name so a failure is easy to place.
#define RUN(test)                          \
  do {                                     \
    std::printf("[ RUN  ] %s\n", #test);   \
    std::fflush(stdout);                   \
    test();                                \
    std::printf("[  OK  ] %s\n", #test);   \
  } while (0)

inline bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
