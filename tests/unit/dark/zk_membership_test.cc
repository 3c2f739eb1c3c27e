// ZkMembership and ZkAnnouncer against a real ZooKeeper (Debian's zookeeper 3.8 jar, started
// here on a free loopback port with its own data dir, tickTime 100 ms so that short sessions
// can expire quickly). Skipped, with a message, when java or the jar is missing.
//
// Nothing waits by sleeping: tests wait for a published snapshot (SnapshotHolder::WaitFor) or
// poll ZooKeeper with a deadline.
#include "hammer/dark/zk_membership.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hammer/dark/zk_announcer.h"
#include "hammer/dark/zk_session.h"

namespace hammer::dark {
namespace {

namespace fs = std::filesystem;

constexpr const char* kZooKeeperJar = "/usr/share/java/zookeeper.jar";
constexpr const char* kZooKeeperConf = "/etc/zookeeper/conf";

std::string FindOnPath(const std::string& name) {
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

uint16_t FreeLoopbackPort() {
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

int ConnectLoopback(uint16_t port, Nanos io_timeout = 0) {
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
bool PollUntil(const std::function<bool()>& condition, Nanos timeout) {
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

// A TCP relay between clients and ZooKeeper that can cut the network: blocked, it drops every
// connection and refuses new ones, while ZooKeeper keeps running (and expires sessions).
class TcpRelay {
 public:
  explicit TcpRelay(uint16_t target) : target_(target) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(listener_, 16);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~TcpRelay() {
    stop_ = true;
    thread_.join();
    for (auto& [a, b] : pairs_) {
      close(a);
      close(b);
    }
    close(listener_);
  }
  std::string hosts() const { return "127.0.0.1:" + std::to_string(port_); }
  void SetBlocked(bool blocked) { blocked_ = blocked; }

 private:
  void Run() {
    char buffer[65536];
    while (!stop_) {
      if (blocked_) {
        for (auto& [a, b] : pairs_) {
          close(a);
          close(b);
        }
        pairs_.clear();
      }
      std::vector<pollfd> fds = {{listener_, POLLIN, 0}};
      for (auto& [a, b] : pairs_) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
      if (poll(fds.data(), fds.size(), 10) <= 0) continue;
      std::vector<std::pair<int, int>> alive;
      if (fds[0].revents & POLLIN) {
        int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        int server = blocked_ || client < 0 ? -1 : ConnectLoopback(target_);
        if (server < 0) {
          if (client >= 0) close(client);
        } else {
          alive.emplace_back(client, server);
        }
      }
      for (size_t i = 0; i + 1 < fds.size(); i += 2) {
        auto [a, b] = pairs_[i / 2];
        bool ok = Pump(fds[i + 1], b, buffer, sizeof buffer) &&
                  Pump(fds[i + 2], a, buffer, sizeof buffer);
        if (ok) {
          alive.emplace_back(a, b);
        } else {
          close(a);
          close(b);
        }
      }
      pairs_.swap(alive);
    }
  }
  static bool Pump(const pollfd& from, int to, char* buffer, size_t size) {
    if ((from.revents & (POLLIN | POLLHUP | POLLERR)) == 0) return true;
    ssize_t n = read(from.fd, buffer, size);
    if (n <= 0) return false;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(to, buffer + done, static_cast<size_t>(n - done));
      if (w <= 0) return false;
      done += w;
    }
    return true;
  }

  uint16_t target_;
  uint16_t port_ = 0;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> blocked_{false};
  std::vector<std::pair<int, int>> pairs_;  // relay thread only
  std::thread thread_;
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
      if (!ZkEnsurePath(zh_, path.substr(0, slash)).ok()) return ZSYSTEMERROR;
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
    EXPECT_TRUE(ZkGetChildren(zh_, path, false, &children, &exists).ok());
    std::sort(children.begin(), children.end());
    return children;
  }
  std::string Get(const std::string& path) {
    std::string data;
    bool exists = false;
    EXPECT_TRUE(ZkGetData(zh_, path, false, &data, &exists).ok());
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
      GTEST_SKIP() << "ZooKeeper tests skipped: " << why;
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

TEST(ParseZkUrlTest, HostsAndPath) {
  Result<ZkUrl> url = ParseZkUrl("zk://127.0.0.1:2181,127.0.0.1:2182/hammer/x/");
  ASSERT_TRUE(url.ok()) << url.status().message();
  EXPECT_EQ(url->hosts, "127.0.0.1:2181,127.0.0.1:2182");
  EXPECT_EQ(url->path, "/hammer/x");
  EXPECT_EQ(ParseZkUrl("zk://127.0.0.1:2181")->path, "");
  EXPECT_EQ(ParseZkUrl("zk://127.0.0.1:2181/")->path, "");
  EXPECT_FALSE(ParseZkUrl("http://127.0.0.1:2181/x").ok());
  EXPECT_FALSE(ParseZkUrl("zk:///x").ok());
  EXPECT_FALSE(ParseZkUrl("zk://h:1/a//b").ok());
  EXPECT_EQ(JoinZkPath("", "config"), "/config");
  EXPECT_EQ(JoinZkPath("/hammer", "config"), "/hammer/config");
}

TEST(ZkStartTest, RejectsBadArguments) {
  EXPECT_FALSE(ZkMembership::Start("zk:/127.0.0.1:1/x", {}).ok());
  ZkMembershipOptions bad_config;
  bad_config.initial_config = R"({"dark": {"d": {"multiplier": -1}}})";
  auto membership = ZkMembership::Start("zk://127.0.0.1:1/x", bad_config);
  ASSERT_FALSE(membership.ok());
  EXPECT_EQ(membership.status().message(),
            "initial config: dark.d.multiplier: must be a number >= 0");
  auto announcer = ZkAnnouncer::Start("zk://127.0.0.1:1/hammer", "http://127.0.0.1:1");
  ASSERT_FALSE(announcer.ok());
  EXPECT_EQ(announcer.status().message(),
            "'zk://127.0.0.1:1/hammer': expected zk://HOST:PORT/PATH/clusters/<cluster name>");
  EXPECT_FALSE(ZkAnnouncer::Start("zk://127.0.0.1:1/h/clusters/d", "ftp://x").ok());
  EXPECT_FALSE(ZkAnnouncer::Start("zk://127.0.0.1:1/h/clusters/..", "http://127.0.0.1:1").ok());
  ZkMembershipOptions bad_cluster;
  bad_cluster.regular_cluster = "a b";
  membership = ZkMembership::Start("zk://127.0.0.1:1/x", bad_cluster);
  ASSERT_FALSE(membership.ok());
  EXPECT_EQ(membership.status().message(),
            "regular cluster: invalid cluster name 'a b' (printable ASCII without '/' or spaces, "
            "at most 128 bytes)");
}

TEST_F(ZkMembershipTest, MembersAppearAndDisappear) {
  ZkMembershipOptions options = Options();
  options.regular_cluster = "web";
  options.register_url = "http://127.0.0.1:7001";
  options.initial_config = R"({"regular": "web", "dark": {"web-dark": {"multiplier": 1.5}}})";
  auto proxy = ZkMembership::Start(Url(), options);
  ASSERT_TRUE(proxy.ok()) << proxy.status().message();
  ZkMembership& membership = **proxy;

  auto s = WaitFor(membership, [](auto& x) { return x.regular_instances == 1; });
  EXPECT_FALSE(s->stale);
  EXPECT_EQ(s->regular_cluster, "web");
  EXPECT_EQ(s->regular_instances, 1u);  // itself
  ASSERT_NE(s->FindDark("web-dark"), nullptr);
  EXPECT_EQ(s->FindDark("web-dark")->config.multiplier, 1.5);
  EXPECT_EQ(DarkCount(*s, "web-dark"), 0u);
  EXPECT_EQ(client_->Get(root_ + "/config"), options.initial_config);
  EXPECT_EQ(client_->Children(root_ + "/clusters/web/members").size(), 1u);
  EXPECT_EQ(membership.registered_path().rfind(root_ + "/clusters/web/members/m-", 0), 0u);

  // A dark instance announces itself: Nd follows within a second.
  MonoNanos start = MonoNow();
  auto dark1 = Announce("web-dark", "http://127.0.0.1:9001");
  s = WaitFor(membership, [](auto& x) { return DarkCount(x, "web-dark") == 1; });
  EXPECT_LT(MonoNow() - start, kSecond);
  ASSERT_EQ(DarkCount(*s, "web-dark"), 1u);
  EXPECT_EQ(s->FindDark("web-dark")->urls[0].ToString(), "http://127.0.0.1:9001/");

  auto dark2 = Announce("web-dark", "http://127.0.0.1:9002");
  s = WaitFor(membership, [](auto& x) { return DarkCount(x, "web-dark") == 2; });
  ASSERT_EQ(DarkCount(*s, "web-dark"), 2u);
  EXPECT_EQ(s->FindDark("web-dark")->urls[0].port, 9001);  // creation order
  EXPECT_EQ(s->FindDark("web-dark")->urls[1].port, 9002);

  // A member whose data is no URL is not an instance copies could go to.
  ASSERT_EQ(client_->Create(root_ + "/clusters/web-dark/members/junk", "not a url"), ZOK);

  // An instance leaves: Nd follows within a second.
  start = MonoNow();
  dark1.reset();
  s = WaitFor(membership, [](auto& x) { return DarkCount(x, "web-dark") == 1; });
  EXPECT_LT(MonoNow() - start, kSecond);
  ASSERT_EQ(DarkCount(*s, "web-dark"), 1u);
  EXPECT_EQ(s->FindDark("web-dark")->urls[0].port, 9002);

  // A second proxy of the regular cluster, registering once it knows its port: both count
  // Ns = 2; it leaves: Ns = 1.
  ZkMembershipOptions second_options = options;
  second_options.register_url.clear();
  auto second = ZkMembership::Start(Url(), second_options);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ((*second)->Current()->regular_instances, 1u);  // read before registering
  EXPECT_FALSE((*second)->Register("http://127.0.0.1:0").ok());
  ASSERT_TRUE((*second)->Register("http://127.0.0.1:7002").ok());
  s = WaitFor(membership, [](auto& x) { return x.regular_instances == 2; });
  EXPECT_EQ(s->regular_instances, 2u);
  EXPECT_EQ(WaitFor(**second, [](auto& x) { return x.regular_instances == 2; })->regular_instances,
            2u);
  EXPECT_EQ(DarkCount(*(*second)->Current(), "web-dark"), 1u);
  const std::string second_path = (*second)->registered_path();
  EXPECT_EQ(client_->Get(second_path), R"({"url":"http://127.0.0.1:7002"})");
  // Moving to another address re-registers: still one member for that proxy.
  ASSERT_TRUE((*second)->Register("http://127.0.0.1:7003").ok());
  ASSERT_TRUE(PollUntil(
      [&] {
        const std::string path = (*second)->registered_path();
        return !path.empty() && path != second_path &&
               client_->Children(root_ + "/clusters/web/members").size() == 2;
      },
      5 * kSecond));
  EXPECT_EQ(client_->Get((*second)->registered_path()), R"({"url":"http://127.0.0.1:7003"})");
  second->reset();
  s = WaitFor(membership, [](auto& x) { return x.regular_instances == 1; });
  EXPECT_EQ(s->regular_instances, 1u);

  ZkMembershipStats stats = membership.stats();
  EXPECT_TRUE(stats.connected);
  EXPECT_FALSE(stats.stale);
  EXPECT_EQ(stats.sessions, 1u);
  EXPECT_EQ(stats.registrations, 1u);
  EXPECT_EQ(stats.config_errors, 0u);
}

TEST_F(ZkMembershipTest, ConfigChangesApplyLive) {
  ASSERT_EQ(
      client_->Create(root_ + "/config", R"({"regular": "web", "dark": {"d": {"multiplier": 1}}})"),
      ZOK);
  std::mutex calls_mu;
  std::vector<uint64_t> calls;
  ZkMembershipOptions options = Options();
  options.on_change = [&](std::shared_ptr<const MembershipSnapshot> s) {
    std::lock_guard lock(calls_mu);
    calls.push_back(s->version);
  };
  auto started = ZkMembership::Start(Url(), options);
  ASSERT_TRUE(started.ok()) << started.status().message();
  ZkMembership& membership = **started;
  auto dark = Announce("d", "http://127.0.0.1:9101");
  auto s = WaitFor(membership, [](auto& x) { return DarkCount(x, "d") == 1; });
  ASSERT_EQ(DarkCount(*s, "d"), 1u);
  EXPECT_EQ(s->regular_cluster, "web");
  EXPECT_EQ(s->regular_instances, 0u);  // no proxy registered: no copies
  EXPECT_EQ(membership.registered_path(), "");

  MonoNanos start = MonoNow();
  ASSERT_EQ(client_->Set(root_ + "/config", R"({"regular": "web", "dark": {"d": {
      "multiplier": 2.5, "strategy": "constant-qps", "target_rate": 5}}})"),
            ZOK);
  s = WaitFor(membership,
              [](auto& x) { return x.dark.size() == 1 && x.dark[0].config.multiplier == 2.5; });
  EXPECT_LT(MonoNow() - start, kSecond);
  ASSERT_EQ(s->dark.size(), 1u);
  EXPECT_EQ(s->dark[0].config.strategy, "constant-qps");
  EXPECT_EQ(s->dark[0].config.target_rate, 5.0);
  EXPECT_EQ(s->dark[0].instances, 1u);

  // A second dark cluster, with a member that was there before it was configured.
  auto other = Announce("e", "http://127.0.0.1:9102");
  ASSERT_EQ(client_->Set(root_ + "/config",
                         R"({"regular": "web", "dark": {"d": {"multiplier": 2.5}, "e": {}}})"),
            ZOK);
  s = WaitFor(membership, [](auto& x) { return DarkCount(x, "e") == 1; });
  ASSERT_EQ(DarkCount(*s, "e"), 1u);
  const uint64_t good_version = s->version;

  // An invalid config is reported and ignored: the last valid one stays in force, not stale.
  ASSERT_EQ(client_->Set(root_ + "/config", R"({"dark": {"d": {"multiplier": -3}}})"), ZOK);
  ASSERT_TRUE(PollUntil([&] { return membership.stats().config_errors == 1; }, 5 * kSecond));
  EXPECT_EQ(membership.stats().last_error,
            root_ + "/config: dark.d.multiplier: must be a number >= 0");
  s = membership.Current();
  EXPECT_EQ(s->version, good_version);
  EXPECT_FALSE(s->stale);
  EXPECT_EQ(DarkCount(*s, "e"), 1u);

  // Watches were re-armed after the rejected change.
  ASSERT_EQ(client_->Set(root_ + "/config", R"({"regular": "web", "dark": {"e": {}}})"), ZOK);
  s = WaitFor(membership, [](auto& x) { return x.dark.size() == 1; });
  ASSERT_EQ(s->dark.size(), 1u);
  EXPECT_EQ(s->dark[0].config.name, "e");

  // No config: no dark clusters.
  ASSERT_EQ(client_->Delete(root_ + "/config"), ZOK);
  s = WaitFor(membership, [](auto& x) { return x.dark.empty(); });
  EXPECT_TRUE(s->dark.empty());
  EXPECT_FALSE(s->stale);

  // on_change saw every publish after the first, in order (it runs just after the publish).
  auto last_call = [&] {
    std::lock_guard lock(calls_mu);
    return calls.empty() ? 0 : calls.back();
  };
  EXPECT_TRUE(PollUntil([&] { return last_call() == membership.version(); }, 5 * kSecond));
  std::lock_guard lock(calls_mu);
  EXPECT_EQ(calls.size() + 1, calls.back());
  EXPECT_TRUE(std::is_sorted(calls.begin(), calls.end()));
}

TEST_F(ZkMembershipTest, AnnouncerIsVisibleAndStaysRegistered) {
  auto announcer = Announce("d", "http://127.0.0.1:9201");
  ASSERT_NE(announcer, nullptr);
  const std::string members = root_ + "/clusters/d/members";
  const std::string node = announcer->node_path();
  ASSERT_EQ(node.rfind(members + "/m-", 0), 0u) << node;
  std::vector<std::string> children = client_->Children(members);
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(members + "/" + children[0], node);
  EXPECT_EQ(client_->Get(node), R"({"url":"http://127.0.0.1:9201"})");

  // Deleted by someone else: registered again.
  ASSERT_EQ(client_->Delete(node), ZOK);
  ASSERT_TRUE(PollUntil(
      [&] {
        children = client_->Children(members);
        return children.size() == 1 && members + "/" + children[0] != node &&
               announcer->node_path() == members + "/" + children[0];
      },
      5 * kSecond));

  // Destroyed: the member goes at once.
  announcer.reset();
  EXPECT_TRUE(client_->Children(members).empty());
}

TEST_F(ZkMembershipTest, ZooKeeperDownKeepsLastValuesThenRecovers) {
  ZkMembershipOptions options = Options();
  options.regular_cluster = "web";
  options.register_url = "http://127.0.0.1:7001";
  options.initial_config = R"({"dark": {"d": {"multiplier": 2}}})";
  auto started = ZkMembership::Start(Url(), options);
  ASSERT_TRUE(started.ok()) << started.status().message();
  ZkMembership& membership = **started;
  auto dark = Announce("d", "http://127.0.0.1:9301");
  auto before = WaitFor(membership, [](auto& x) { return DarkCount(x, "d") == 1; });
  ASSERT_EQ(DarkCount(*before, "d"), 1u);
  ASSERT_EQ(before->regular_instances, 1u);

  client_.reset();
  MonoNanos start = MonoNow();
  server_->Kill();
  auto down = WaitFor(membership, [](auto& x) { return x.stale; });
  ASSERT_TRUE(down->stale);
  EXPECT_LT(MonoNow() - start, kSecond);
  EXPECT_TRUE(down->SameMembership(*before));  // the last known values stay in force
  EXPECT_TRUE(membership.stats().stale);
  // A read that fails on the dead server may mark the values stale before the client library
  // reports the lost connection (seen once under ThreadSanitizer): wait for that report too.
  EXPECT_TRUE(PollUntil([&] { return !membership.stats().connected; }, 10 * kSecond));

  ASSERT_TRUE(server_->Start());  // same port, same data
  auto up = WaitFor(
      membership, [](auto& x) { return !x.stale; }, 15 * kSecond);
  ASSERT_FALSE(up->stale);
  EXPECT_TRUE(up->SameMembership(*before));
  client_ = std::make_unique<TestClient>(server_->hosts());
  EXPECT_EQ(client_->Children(root_ + "/clusters/web/members").size(), 1u);
  ASSERT_TRUE(dark->WaitRegistered(10 * kSecond));
  EXPECT_EQ(client_->Children(root_ + "/clusters/d/members").size(), 1u);

  // Watches work again.
  auto dark2 = Announce("d", "http://127.0.0.1:9302");
  EXPECT_EQ(DarkCount(*WaitFor(membership, [](auto& x) { return DarkCount(x, "d") == 2; }), "d"),
            2u);
  EXPECT_GE(membership.stats().disconnects, 1u);
}

TEST_F(ZkMembershipTest, ExpiredSessionRegistersAgain) {
  // Proxy and dark instance reach ZooKeeper through a relay that can cut them off. Cut off
  // longer than their 1 s session, they lose it; back, they start a new one and re-register.
  TcpRelay relay(server_->port());
  ZkMembershipOptions options = Options();
  options.session_timeout = kSecond;
  options.regular_cluster = "web";
  options.register_url = "http://127.0.0.1:7001";
  options.initial_config = R"({"dark": {"d": {}}})";
  auto started = ZkMembership::Start(Url(relay.hosts()), options);
  ASSERT_TRUE(started.ok()) << started.status().message();
  ZkMembership& membership = **started;
  ZkAnnouncerOptions announcer_options;
  announcer_options.session.session_timeout = kSecond;
  announcer_options.session.retry_delay = 50 * kMillisecond;
  announcer_options.start_timeout = 10 * kSecond;
  auto dark = ZkAnnouncer::Start(Url(relay.hosts(), "/clusters/d"), "http://127.0.0.1:9401",
                                 announcer_options);
  ASSERT_TRUE(dark.ok()) << dark.status().message();
  auto before = WaitFor(membership, [](auto& x) { return DarkCount(x, "d") == 1; });
  ASSERT_EQ(DarkCount(*before, "d"), 1u);
  ASSERT_EQ(before->regular_instances, 1u);
  const int64_t old_session = membership.session_id();
  const std::string old_path = membership.registered_path();

  relay.SetBlocked(true);
  ASSERT_TRUE(WaitFor(membership, [](auto& x) { return x.stale; })->stale);
  // ZooKeeper expires both sessions: their ephemeral members go.
  ASSERT_TRUE(PollUntil(
      [&] {
        return client_->Children(root_ + "/clusters/web/members").empty() &&
               client_->Children(root_ + "/clusters/d/members").empty();
      },
      10 * kSecond));
  EXPECT_TRUE(membership.Current()->SameMembership(*before));  // still in force meanwhile
  // A config written while the proxy was away is picked up on its return.
  ASSERT_EQ(client_->Set(root_ + "/config", R"({"dark": {"d": {"multiplier": 3}}})"), ZOK);

  relay.SetBlocked(false);
  auto after = WaitFor(
      membership,
      [](auto& x) {
        return !x.stale && x.regular_instances == 1 && DarkCount(x, "d") == 1 &&
               x.dark[0].config.multiplier == 3;
      },
      15 * kSecond);
  ASSERT_FALSE(after->stale);
  EXPECT_EQ(after->regular_instances, 1u);
  EXPECT_EQ(DarkCount(*after, "d"), 1u);
  EXPECT_EQ(after->dark[0].config.multiplier, 3.0);
  EXPECT_NE(membership.session_id(), old_session);
  EXPECT_GE(membership.stats().session_expiries, 1u);
  EXPECT_EQ(membership.stats().sessions, 2u);
  const std::string new_path = membership.registered_path();
  EXPECT_NE(new_path, "");
  EXPECT_NE(new_path, old_path);
  EXPECT_EQ(client_->Children(root_ + "/clusters/web/members").size(), 1u);
  ASSERT_TRUE((*dark)->WaitRegistered(10 * kSecond));
  EXPECT_EQ(client_->Children(root_ + "/clusters/d/members").size(), 1u);
}

}  // namespace
}  // namespace hammer::dark
