#include "tests/integration/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace npu::server::testing {
namespace {

// The port at the end of a "<prefix>HOST:PORT" line of `log`, or 0.
int PortAfter(const std::string& log, absl::string_view prefix) {
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::StartsWith(line, prefix)) continue;
    const size_t colon = line.rfind(':');
    int port = 0;
    if (colon != absl::string_view::npos && absl::SimpleAtoi(line.substr(colon + 1), &port)) {
      return port;
    }
  }
  return 0;
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::string& binary, const std::vector<std::string>& args) {
  std::unique_ptr<ServerProcess> process(new ServerProcess());
  std::string log_template = MakeTempDir("npu_server_") + "/server.log";
  process->log_path_ = log_template;
  const int log_fd = open(log_template.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (log_fd < 0) return absl::InternalError(absl::StrCat("cannot create ", log_template));

  bool metrics_given = false;
  for (const std::string& arg : args) {
    metrics_given = metrics_given || absl::StartsWith(arg, "--metrics_port");
  }
  std::vector<std::string> argv_strings = {binary, "--address=127.0.0.1", "--port=0"};
  if (!metrics_given) argv_strings.push_back("--metrics_port=0");
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  // posix_spawn rather than fork(): the test process already runs gRPC
  // threads, and only async-signal-safe work may follow a fork there.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, log_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, log_fd, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // The child must not inherit a blocked SIGTERM from a test thread.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  const int spawned =
      posix_spawn(&process->pid_, binary.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(log_fd);
  if (spawned != 0) {
    process->pid_ = -1;
    return absl::InternalError(absl::StrCat("cannot start ", binary, ": ", strerror(spawned)));
  }

  const absl::Time give_up = absl::Now() + kHangGuard;
  while (true) {
    const std::string log = process->Log();
    process->port_ = PortAfter(log, "listening on ");
    process->metrics_port_ = PortAfter(log, "metrics on ");
    if (process->port_ != 0) {
      // "metrics on" is printed before "listening on", so both are in.
      if (process->metrics_port_ == 0) process->metrics_port_ = -1;
      return process;
    }
    int status = 0;
    if (waitpid(process->pid_, &status, WNOHANG) == process->pid_) {
      process->exited_ = true;
      process->exit_code_ = DecodeWaitStatus(status);
      return absl::InternalError(absl::StrCat(binary, " exited with ", process->exit_code_,
                                              " before serving:\n", process->Log()));
    }
    if (absl::Now() > give_up) {
      return absl::InternalError(absl::StrCat(binary, " printed no port:\n", log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (!log_path_.empty()) {
    unlink(log_path_.c_str());
    rmdir(log_path_.substr(0, log_path_.rfind('/')).c_str());
  }
}

std::string ServerProcess::target() const { return absl::StrCat("127.0.0.1:", port_); }

void ServerProcess::Signal(int signal_number) {
  if (pid_ > 0 && !exited_) kill(pid_, signal_number);
}

int ServerProcess::Wait() {
  if (exited_) return exit_code_;
  const absl::Time give_up = absl::Now() + kHangGuard;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (done < 0 && errno != EINTR) return -1;
    if (absl::Now() > give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  exited_ = true;
  exit_code_ = DecodeWaitStatus(status);
  return exit_code_;
}

std::string ServerProcess::Log() const {
  std::ifstream in(log_path_, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string path =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/", prefix, "XXXXXX");
  if (mkdtemp(path.data()) == nullptr) return "";
  return path;
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to 127.0.0.1:", port));
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::InternalError("short write");
  }
  std::string reply;
  char buffer[65536];
  ssize_t got = 0;
  while ((got = read(fd, buffer, sizeof(buffer))) > 0) reply.append(buffer, got);
  close(fd);
  const size_t body = reply.find("\r\n\r\n");
  if (!absl::StartsWith(reply, "HTTP/1.") || body == std::string::npos) {
    return absl::InternalError(absl::StrCat("not an HTTP reply: ", reply.substr(0, 200)));
  }
  return reply.substr(body + 4);
}

double MetricValue(const std::string& metrics, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(metrics, '\n')) {
    if (!absl::StartsWith(line, series) || line.size() <= series.size() ||
        line[series.size()] != ' ') {
      continue;
    }
    double value = 0;
    if (absl::SimpleAtod(line.substr(series.size() + 1), &value)) return value;
  }
  return -1;
}

}  // namespace npu::server::testing
