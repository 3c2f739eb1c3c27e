// The real ZooKeeper the ZkMembership and ZkAnnouncer tests run against (Debian's zookeeper
// 3.8 jar, started in a child JVM on a free loopback port with its own data dir, tickTime 100 ms
// so that short sessions can expire quickly), the test's own synchronous client (TestClient,
// the operator and an independent observer), and the ZkMembershipTest fixture: one server for
// the whole suite, whichever file its tests are in, started again by a test's SetUp if an
// earlier test stopped it; skipped, with a message, when java or the jar is missing.
//
// Nothing waits by sleeping: tests wait for a published snapshot (SnapshotHolder::WaitFor) or
// poll ZooKeeper with a deadline (PollUntil).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/dark/membership.h"
#include "hammer/dark/zk_announcer.h"
#include "hammer/dark/zk_membership.h"
#include "hammer/net/zk_session.h"

namespace hammer::dark::testing {

namespace fs = std::filesystem;

inline constexpr const char* kZooKeeperJar = "/usr/share/java/zookeeper.jar";
inline constexpr const char* kZooKeeperConf = "/etc/zookeeper/conf";

inline std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

inline uint16_t FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

inline int ConnectLoopback(uint16_t port, Nanos io_timeout = 0) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (io_timeout > 0) {
    timeval tv{.tv_sec = io_timeout / kSecond, .tv_usec = io_timeout % kSecond / kMicrosecond};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Polls `condition` every 10 ms until it holds or `timeout` passes.
inline bool PollUntil(const std::function<bool()>& condition, Nanos timeout) {
  const MonoNanos deadline = MonoNow() + timeout;
  while (!condition()) {
    if (MonoNow() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A standalone ZooKeeper in a child JVM. The child dies with this process (PR_SET_PDEATHSIG).
class ZooKeeperServer {
 public:
  static std::string Unavailable() {
    if (FindOnPath("java").empty()) return "java not found on PATH";
    if (access(kZooKeeperJar, R_OK) != 0) {
      return std::string(kZooKeeperJar) + " missing (apt-get install zookeeper)";
    }
    return "";
  }

  explicit ZooKeeperServer(fs::path dir) : dir_(std::move(dir)), port_(FreeLoopbackPort()) {}
  ~ZooKeeperServer() { Kill(); }

  uint16_t port() const { return port_; }
  std::string hosts() const { return "127.0.0.1:" + std::to_string(port_); }
  bool running() const { return pid_ > 0; }

  // Starts on the same port; `data` names the data directory (under dir_). Waits until it
  // serves sessions.
  bool Start(const std::string& data = "data") {
    fs::create_directories(dir_ / data);
    const fs::path config = dir_ / "zoo.cfg";
    std::ofstream(config) << "tickTime=100\n"
                          << "dataDir=" << (dir_ / data).string() << "\n"
                          << "clientPort=" << port_ << "\n"
                          << "clientPortAddress=127.0.0.1\n"
                          << "minSessionTimeout=200\nmaxSessionTimeout=60000\n"
                          << "admin.enableServer=false\n4lw.commands.whitelist=ruok,srvr\n"
                          << "forceSync=no\n";
    const std::string java = FindOnPath("java");
    const std::string log = (dir_ / "zookeeper.log").string();
    const std::string classpath = std::string(kZooKeeperConf) + ":" + kZooKeeperJar;
    std::vector<std::string> args = {java,
                                     "-Xshare:auto",
                                     "-XX:TieredStopAtLevel=1",
                                     "-XX:+UseSerialGC",
                                     "-Xmx256m",
                                     "-Dzookeeper.admin.enableServer=false",
                                     "-cp",
                                     classpath,
                                     "org.apache.zookeeper.server.ZooKeeperServerMain",
                                     config.string()};
    std::vector<char*> argv;
    for (std::string& arg : args)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {  // only async-signal-safe calls from here to exec
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
    if (pid < 0) return false;
    pid_ = pid;
    return PollUntil([&] { return Ready(); }, 30 * kSecond);
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  // `srvr` shows the mode only once sessions are served; `ruok` says imok earlier, while
  // connections are still closed with "ZooKeeperServer not running".
  bool Ready() const {
    int fd = ConnectLoopback(port_, /*io_timeout=*/kSecond);  // a JVM starting up may not answer
    if (fd < 0) return false;
    std::string answer;
    if (write(fd, "srvr", 4) == 4) {
      char buffer[1024];
      for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
        answer.append(buffer, n);
    }
    close(fd);
    return answer.find("Mode: ") != std::string::npos;
  }

  fs::path dir_;
  uint16_t port_;
  pid_t pid_ = 0;
};

// The test's own synchronous client, to play the operator (zkCli) and an independent observer.
class TestClient {
 public:
  explicit TestClient(const std::string& hosts) {
    zh_ = zookeeper_init(hosts.c_str(), &TestClient::Watcher, 10000, nullptr, this, 0);
    std::unique_lock lock(mu_);
    connected_cv_.wait_for(lock, std::chrono::seconds(10), [&] { return connected_; });
  }
  ~TestClient() { zookeeper_close(zh_); }
  bool connected() {
    std::lock_guard lock(mu_);
    return connected_;
  }

  int Create(const std::string& path, const std::string& data) {
    if (size_t slash = path.rfind('/'); slash > 0) {
      if (!net::ZkEnsurePath(zh_, path.substr(0, slash)).ok()) return ZSYSTEMERROR;
    }
    return zoo_create(zh_, path.c_str(), data.data(), static_cast<int>(data.size()),
                      &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0);
  }
  int Set(const std::string& path, const std::string& data) {
    return zoo_set(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), -1);
  }
  int Delete(const std::string& path) { return zoo_delete(zh_, path.c_str(), -1); }
  std::vector<std::string> Children(const std::string& path) {
    std::vector<std::string> children;
    bool exists = false;
    EXPECT_TRUE(net::ZkGetChildren(zh_, path, false, &children, &exists).ok());
    std::sort(children.begin(), children.end());
    return children;
  }
  std::string Get(const std::string& path) {
    std::string data;
    bool exists = false;
    EXPECT_TRUE(net::ZkGetData(zh_, path, false, &data, &exists).ok());
    return data;
  }

 private:
  static void Watcher(zhandle_t*, int type, int state, const char*, void* context) {
    auto* self = static_cast<TestClient*>(context);
    if (type != ZOO_SESSION_EVENT) return;
    std::lock_guard lock(self->mu_);
    self->connected_ = state == ZOO_CONNECTED_STATE;
    self->connected_cv_.notify_all();
  }

  zhandle_t* zh_;
  std::mutex mu_;
  std::condition_variable connected_cv_;
  bool connected_ = false;
};

class ZkMembershipTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!ZooKeeperServer::Unavailable().empty()) return;
    char pattern[] = "/tmp/hammer-zk-test-XXXXXX";
    dir_ = new fs::path(mkdtemp(pattern));
    // The C client logs process-wide; keep its reconnect complaints out of the test output.
    zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    zoo_set_log_stream(std::fopen((*dir_ / "client.log").c_str(), "a"));
    server_ = new ZooKeeperServer(*dir_);
    started_ = server_->Start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    if (dir_ != nullptr) fs::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (std::string why = ZooKeeperServer::Unavailable(); !why.empty()) {
      // A skip fails the run (tests/unit/test_main.cc) unless HAMMER_ALLOW_SKIPS=1.
      GTEST_SKIP() << "ZooKeeper tests need a server: " << why << " (make deps-test)";
    }
    ASSERT_TRUE(started_) << "ZooKeeper did not start; see " << (*dir_ / "zookeeper.log");
    if (!server_->running()) {
      ASSERT_TRUE(server_->Start());
    }
    root_ = std::string("/") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    client_ = std::make_unique<TestClient>(server_->hosts());
    ASSERT_TRUE(client_->connected());
  }

  std::string Url(const std::string& hosts, const std::string& path = "") const {
    return "zk://" + hosts + root_ + path;
  }
  std::string Url() const { return Url(server_->hosts()); }

  ZkMembershipOptions Options() const {
    ZkMembershipOptions options;
    options.session_timeout = 4 * kSecond;
    options.retry_delay = 50 * kMillisecond;
    options.start_timeout = 10 * kSecond;
    options.zk_log_path = (*dir_ / "client.log").string();
    return options;
  }

  std::unique_ptr<ZkAnnouncer> Announce(const std::string& cluster, const std::string& url,
                                        const std::string& hosts = "") {
    ZkAnnouncerOptions options;
    options.session.session_timeout = 4 * kSecond;
    options.session.retry_delay = 50 * kMillisecond;
    options.session.log_path = (*dir_ / "client.log").string();
    options.start_timeout = 10 * kSecond;
    auto announcer = ZkAnnouncer::Start(
        Url(hosts.empty() ? server_->hosts() : hosts, "/clusters/" + cluster), url, options);
    EXPECT_TRUE(announcer.ok()) << announcer.status().message();
    return announcer.ok() ? std::move(announcer).value() : nullptr;
  }

  static std::shared_ptr<const MembershipSnapshot> WaitFor(
      const Membership& membership, const std::function<bool(const MembershipSnapshot&)>& accept,
      Nanos timeout = 5 * kSecond) {
    return membership.holder().WaitFor(accept, timeout);
  }

  static uint32_t DarkCount(const MembershipSnapshot& s, std::string_view name) {
    const DarkClusterMembership* cluster = s.FindDark(name);
    return cluster != nullptr ? cluster->instances : ~0u;
  }

  static inline fs::path* dir_ = nullptr;
  static inline ZooKeeperServer* server_ = nullptr;
  static inline bool started_ = false;
  std::string root_;
  std::unique_ptr<TestClient> client_;
};

}  // namespace hammer::dark::testing
