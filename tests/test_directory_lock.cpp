// DirectoryLock (io/files.h): one normtool a directory, and a copy of the lock that a child of this
// process holds between fork and exec is waited for, not taken for another normtool.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include "core/errors.h"
#include "helpers.h"
#include "io/files.h"

namespace nt::test {
namespace {

// A reproduction's sweep let go of its directory while a child it had forked (for a run of another
// sweep) still shared the lock, not yet exec'd: the next claim's sweep on that directory failed
// with "another normtool (pid <its own>)". It now waits until the child lets go.
TEST(DirectoryLock, ACopyInAChildOfThisProcessIsWaitedFor) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  auto lock = std::make_unique<DirectoryLock>(d.str(), "--out " + d.str());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the inherited lock a while, as a child the scheduler has not run yet
    usleep(300000);
    _exit(0);
  }
  lock.reset();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(DirectoryLock(d.str(), "--out " + d.str()));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));  // it did wait
  int status = 0;
  waitpid(child, &status, 0);
}

// Another process's lock is refused at once, naming it.
TEST(DirectoryLock, AnotherProcesssLockIsRefusedNamingItsPid) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const DirectoryLock mine(d.str(), "child");
    (void)!write(ready[1], "x", 1);
    usleep(2000000);
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    DirectoryLock again(d.str(), "--out " + d.str());
    ADD_FAILURE() << "the second lock was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("another normtool (pid " + std::to_string(child) + ")"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  close(ready[0]), close(ready[1]);
}

}  // namespace
}  // namespace nt::test
