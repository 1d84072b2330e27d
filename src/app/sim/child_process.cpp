#include "app/sim/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace gpumeter::app {

Expected<std::unique_ptr<ChildProcess>> ChildProcess::Start(const std::string& path,
                                                            const std::vector<std::string>& args) {
  if (::access(path.c_str(), X_OK) != 0)
    return MakeError(ErrorCode::kUnavailable, path + ": " + std::strerror(errno));
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> owned{path};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return MakeError(ErrorCode::kUnavailable, path + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, path));
}

std::optional<int> ChildProcess::Exited() {
  if (status_) return status_;
  int raw = 0;
  const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
  if (r == pid_)
    status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0);
  else if (r < 0 && errno == ECHILD)
    status_ = -1;  // reaped elsewhere: gone all the same
  return status_;
}

Expected<void> ChildProcess::CheckAlive(bool timed_out) {
  if (auto code = Exited())
    return MakeError(ErrorCode::kUnavailable, path_ + " exited with status " +
                                                  std::to_string(*code) + " before it was ready");
  if (timed_out) return MakeError(ErrorCode::kUnavailable, path_ + ": not ready in time");
  return {};
}

void ChildProcess::Pause() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

ChildProcess::~ChildProcess() {
  if (Exited()) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 250 && !Exited(); ++i) Pause();  // 5 s to stop cleanly
  if (Exited()) return;
  ::kill(pid_, SIGKILL);
  int raw = 0;
  ::waitpid(pid_, &raw, 0);
}

}  // namespace gpumeter::app
