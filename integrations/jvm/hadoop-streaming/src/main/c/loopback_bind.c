// loopback_bind: an LD_PRELOAD library that turns every wildcard bind(2) of a process into a
// loopback bind, for the Hadoop test harness only.
//
// Hadoop 3.4 binds three servers to the wildcard address with no setting to change it: the
// NodeManager's ShuffleHandler (`new InetSocketAddress(port)`), and in every MRAppMaster
// container the client RPC service (`new InetSocketAddress(0)`) and the task umbilical
// (`setBindAddress("0.0.0.0")`). Every other server is pinned by configuration
// (StreamingHarness.pinToLoopback); this library pins these three, so that nothing the tests
// start listens beyond 127.0.0.1.
//
// IPv4 0.0.0.0 becomes 127.0.0.1; IPv6 :: and ::ffff:0.0.0.0 become ::ffff:127.0.0.1 (a
// dual-stack socket then still takes IPv4 loopback clients, which is what Hadoop advertises).
// Any other address, and any other call, is left alone.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*BindFunction)(int, const struct sockaddr*, socklen_t);

int bind(int fd, const struct sockaddr* address, socklen_t length) {
  static BindFunction next_bind;
  if (next_bind == NULL) next_bind = (BindFunction)dlsym(RTLD_NEXT, "bind");
  if (address != NULL && address->sa_family == AF_INET &&
      length >= (socklen_t)sizeof(struct sockaddr_in)) {
    struct sockaddr_in in4;
    memcpy(&in4, address, sizeof in4);
    if (in4.sin_addr.s_addr == htonl(INADDR_ANY)) {
      in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      return next_bind(fd, (const struct sockaddr*)&in4, sizeof in4);
    }
  } else if (address != NULL && address->sa_family == AF_INET6 &&
             length >= (socklen_t)sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 in6;
    memcpy(&in6, address, sizeof in6);
    static const unsigned char kMappedAny[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr) ||
        memcmp(&in6.sin6_addr, kMappedAny, sizeof kMappedAny) == 0) {
      static const unsigned char kMappedLoopback[16] = {0, 0, 0, 0, 0,    0,    0, 0,
                                                        0, 0, 0xff, 0xff, 127, 0, 0, 1};
      memcpy(&in6.sin6_addr, kMappedLoopback, sizeof kMappedLoopback);
      return next_bind(fd, (const struct sockaddr*)&in6, sizeof in6);
    }
  }
  return next_bind(fd, address, length);
}
