// Polling for what another thread finishes: the tests wait for a state, never
// for a time.
#ifndef NPU_TESTS_TESTING_WAIT_H_
#define NPU_TESTS_TESTING_WAIT_H_

#include <chrono>
#include <thread>

namespace npu::testing {

// Waits until `done()` holds, polling every millisecond; true when it does.
// The bound (a minute) only guards against a hang: nothing asserts on the
// elapsed time.
template <typename Predicate>
bool WaitFor(Predicate done) {
  for (int i = 0; i < 60000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_WAIT_H_
