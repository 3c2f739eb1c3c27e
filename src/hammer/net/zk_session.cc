#include "hammer/net/zk_session.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace hammer::net {

// The watcher's context: which session, and which of its handles (a dead handle's late
// events must not be taken for the new one's).
struct ZkSession::HandleContext {
  ZkSession* session;
  uint64_t generation;
};

namespace {

void ConfigureLogging(const std::string& log_path) {
  static std::mutex mu;
  static bool configured = false;
  static std::string current_path;
  std::lock_guard lock(mu);
  if (!configured) {
    zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    configured = true;
  }
  if (log_path.empty() || log_path == current_path) return;
  // Never closed: the C client may be writing to the previous stream from its threads.
  if (FILE* file = std::fopen(log_path.c_str(), "a"); file != nullptr) {
    zoo_set_log_stream(file);
    current_path = log_path;
  }
}

// "'URL': problem". Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict for
// "'" + std::string(url) (a one-character literal through basic_string::_M_replace, GCC bug
// 105329).
Status BadZkUrl(std::string_view url, std::string_view problem) {
  std::string message = "'";
  message.append(url).append("': ").append(problem);
  return Status::Error(std::move(message));
}

}  // namespace

Result<ZkUrl> ParseZkUrl(std::string_view url) {
  constexpr std::string_view kScheme = "zk://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return BadZkUrl(url, "expected zk://HOST:PORT[,HOST:PORT...]/PATH");
  }
  std::string_view rest = url.substr(kScheme.size());
  size_t slash = rest.find('/');
  ZkUrl out;
  out.hosts = std::string(rest.substr(0, slash));
  if (out.hosts.empty()) return BadZkUrl(url, "no ZooKeeper host");
  for (char c : out.hosts) {
    if (c <= ' ' || c > '~') return BadZkUrl(url, "invalid character in the host list");
  }
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  while (!path.empty() && path.back() == '/')
    path.remove_suffix(1);
  if (path.find("//") != std::string_view::npos) return BadZkUrl(url, "empty path segment");
  out.path = std::string(path);
  return out;
}

std::string JoinZkPath(std::string_view parent, std::string_view child) {
  std::string out(parent);
  out += '/';
  out += child;
  return out;
}

Status ZkStatus(std::string_view operation, std::string_view path, int rc) {
  if (rc == ZOK) return Status::Ok();
  return Status::Error("zookeeper " + std::string(operation) + " " + std::string(path) + ": " +
                       zerror(rc));
}

Status ZkEnsurePath(zhandle_t* zh, const std::string& path) {
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    std::string prefix = path.substr(0, end);
    int rc = zoo_create(zh, prefix.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) return ZkStatus("create", prefix, rc);
    if (end == std::string::npos) return Status::Ok();
  }
}

Status ZkGetChildren(zhandle_t* zh, const std::string& path, bool watch,
                     std::vector<std::string>* children, bool* exists) {
  children->clear();
  for (;;) {
    String_vector strings{};
    int rc = zoo_get_children(zh, path.c_str(), watch ? 1 : 0, &strings);
    if (rc == ZOK) {
      for (int32_t i = 0; i < strings.count; ++i)
        children->emplace_back(strings.data[i]);
      deallocate_String_vector(&strings);
      *exists = true;
      return Status::Ok();
    }
    if (rc != ZNONODE) return ZkStatus("get children", path, rc);
    // Missing: exists() arms a creation watch; if the znode appeared meanwhile, read it again.
    Stat stat{};
    rc = zoo_exists(zh, path.c_str(), watch ? 1 : 0, &stat);
    if (rc == ZNONODE) {
      *exists = false;
      return Status::Ok();
    }
    if (rc != ZOK) return ZkStatus("exists", path, rc);
  }
}

Status ZkGetData(zhandle_t* zh, const std::string& path, bool watch, std::string* data,
                 bool* exists) {
  std::vector<char> buffer(64 * 1024);
  for (;;) {
    Stat stat{};
    int length = static_cast<int>(buffer.size());
    int rc = zoo_get(zh, path.c_str(), watch ? 1 : 0, buffer.data(), &length, &stat);
    if (rc == ZOK && stat.dataLength > static_cast<int32_t>(buffer.size())) {
      buffer.resize(static_cast<size_t>(stat.dataLength));  // larger than guessed: again
      continue;
    }
    if (rc == ZOK) {
      data->assign(buffer.data(), length > 0 ? static_cast<size_t>(length) : 0);
      *exists = true;
      return Status::Ok();
    }
    if (rc != ZNONODE) return ZkStatus("get", path, rc);
    rc = zoo_exists(zh, path.c_str(), watch ? 1 : 0, &stat);
    if (rc == ZNONODE) {
      data->clear();
      *exists = false;
      return Status::Ok();
    }
    if (rc != ZOK) return ZkStatus("exists", path, rc);
  }
}

ZkSession::ZkSession(std::string hosts, const ZkSessionOptions& options, RefreshFn refresh,
                     ConnectionFn on_connection)
    : hosts_(std::move(hosts)),
      options_(options),
      refresh_(std::move(refresh)),
      on_connection_(std::move(on_connection)) {}

Result<std::unique_ptr<ZkSession>> ZkSession::Start(std::string hosts,
                                                    const ZkSessionOptions& options,
                                                    RefreshFn refresh, ConnectionFn on_connection) {
  ConfigureLogging(options.log_path);
  std::unique_ptr<ZkSession> session(
      new ZkSession(std::move(hosts), options, std::move(refresh), std::move(on_connection)));
  if (Status s = session->Init(); !s.ok()) return s;
  session->thread_ = std::thread([raw = session.get()] { raw->Run(); });
  return session;
}

ZkSession::~ZkSession() {
  Stop();
}

void ZkSession::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (zh_ != nullptr) {
    zookeeper_close(zh_);  // joins the library's threads: no callback runs after this
    zh_ = nullptr;
  }
}

void ZkSession::RequestRefresh() {
  {
    std::lock_guard lock(mu_);
    refresh_requested_ = true;
  }
  wake_.notify_all();
}

ZkSessionStats ZkSession::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

int64_t ZkSession::session_id() const {
  std::lock_guard lock(mu_);
  return session_id_;
}

void ZkSession::Watcher(zhandle_t* /*zh*/, int type, int state, const char* /*path*/,
                        void* context) {
  // Completion thread: queue and return.
  auto* handle = static_cast<HandleContext*>(context);
  ZkSession* session = handle->session;
  {
    std::lock_guard lock(session->mu_);
    session->events_.push_back(Event{handle->generation, type, state});
  }
  session->wake_.notify_all();
}

Status ZkSession::Init() {
  context_ = std::make_unique<HandleContext>(HandleContext{this, ++generation_});
  errno = 0;
  zh_ = zookeeper_init(hosts_.c_str(), &ZkSession::Watcher,
                       static_cast<int>(options_.session_timeout / kMillisecond), nullptr,
                       context_.get(), 0);
  if (zh_ == nullptr) {
    return Status::Error("zookeeper_init " + hosts_ + ": " +
                         (errno != 0 ? std::strerror(errno) : "failed"));
  }
  return Status::Ok();
}

void ZkSession::Fail(std::string message) {
  std::lock_guard lock(mu_);
  stats_.last_error = std::move(message);
}

void ZkSession::Run() {
  bool connected = false;
  bool dirty = false;    // a refresh is due
  bool expired = false;  // the handle is dead: close and init again
  MonoNanos retry_at = 0;
  int64_t last_session = 0;
  for (;;) {
    std::deque<Event> events;
    {
      std::unique_lock lock(mu_);
      auto ready = [&] { return stop_ || !events_.empty() || refresh_requested_; };
      bool timed = (dirty && connected) || zh_ == nullptr;
      if (timed) {
        wake_.wait_for(lock, std::chrono::nanoseconds(std::max<Nanos>(0, retry_at - MonoNow())),
                       ready);
      } else {
        wake_.wait(lock, ready);
      }
      if (stop_) return;
      events.swap(events_);
      dirty |= refresh_requested_;
      refresh_requested_ = false;
    }
    for (const Event& event : events) {
      if (event.generation != generation_) continue;  // from a handle already closed
      if (event.type != ZOO_SESSION_EVENT) {
        dirty = true;  // a watch fired
      } else if (event.state == ZOO_CONNECTED_STATE) {
        const int64_t id = zoo_client_id(zh_)->client_id;
        connected = true;
        dirty = true;
        retry_at = 0;
        {
          std::lock_guard lock(mu_);
          stats_.connected = true;
          ++stats_.connects;
          if (id != last_session) ++stats_.sessions;
          session_id_ = last_session = id;
        }
        if (on_connection_) on_connection_(true);
      } else if (event.state == ZOO_EXPIRED_SESSION_STATE) {
        expired = true;
      } else if (event.state == ZOO_AUTH_FAILED_STATE) {
        expired = true;
        retry_at = MonoNow() + options_.retry_delay;  // do not spin on a refused login
      } else if (connected) {  // connecting / associating: the connection was lost
        connected = false;
        {
          std::lock_guard lock(mu_);
          stats_.connected = false;
          ++stats_.disconnects;
        }
        if (on_connection_) on_connection_(false);
      }
    }
    if (expired) {
      expired = false;
      connected = false;
      {
        std::lock_guard lock(mu_);
        stats_.connected = false;
        ++stats_.expiries;
      }
      if (on_connection_) on_connection_(false);
      if (zh_ != nullptr) zookeeper_close(zh_);  // a dead handle: nothing is sent
      zh_ = nullptr;
    }
    if (zh_ == nullptr && MonoNow() >= retry_at) {
      if (Status s = Init(); !s.ok()) {
        Fail(s.message());
        retry_at = MonoNow() + options_.retry_delay;
      }
      continue;
    }
    if (dirty && connected && MonoNow() >= retry_at) {
      dirty = false;
      Status s = refresh_(zh_);
      std::lock_guard lock(mu_);
      if (s.ok()) {
        ++stats_.refreshes;
      } else {
        dirty = true;
        retry_at = MonoNow() + options_.retry_delay;
        ++stats_.refresh_failures;
        stats_.last_error = s.message();
      }
    }
  }
}

}  // namespace hammer::net
