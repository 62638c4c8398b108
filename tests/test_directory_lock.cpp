// DirectoryLock (io/files.h): one normtool a directory. A lock that this process lets go is free at
// once, even while a child it forked meanwhile has not exec'd yet and so shares the locked file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "core/errors.h"
#include "helpers.h"
#include "io/files.h"

namespace nt::test {
namespace {

// A reproduction's sweep let go of its directory while a child it had forked (for a run of another
// sweep) still shared the lock, not yet exec'd: the next claim's sweep on that directory failed
// with "another normtool (pid <its own>)". Here the child holds its copy until the parent has
// taken the lock again.
TEST(DirectoryLock, ALockLetGoIsFreeWhileAForkedChildStillSharesIt) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  auto lock = std::make_unique<DirectoryLock>(d.str(), "--out " + d.str());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // keeps the inherited lock until the parent says so
    close(go[1]);
    char c;
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  close(go[0]);
  lock.reset();
  EXPECT_NO_THROW(DirectoryLock(d.str(), "--out " + d.str()));
  EXPECT_FALSE(DirectoryLock::held(d.str()));
  (void)!write(go[1], "x", 1);
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
}

// Another process's lock is refused, naming its pid.
TEST(DirectoryLock, AnotherProcesssLockIsRefusedNamingItsPid) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    try {
      const DirectoryLock mine(d.str(), "child");
      (void)!write(ready[1], "x", 1);
      pause();  // until killed
    } catch (...) {
    }
    _exit(1);
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  EXPECT_TRUE(DirectoryLock::held(d.str()));
  try {
    DirectoryLock again(d.str(), "--out " + d.str());
    ADD_FAILURE() << "the second lock was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("another normtool (pid " + std::to_string(child) + ")"), std::string::npos)
        << e.what();
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  close(ready[0]);
  EXPECT_FALSE(DirectoryLock::held(d.str()));
}

}  // namespace
}  // namespace nt::test
