#include "hammer/net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace hammer::net {
namespace {

SocketAddress MustParse(std::string_view text) {
  Result<SocketAddress> address = SocketAddress::Parse(text);
  EXPECT_TRUE(address.ok()) << text << ": " << address.status().message();
  return address.ok() ? *address : SocketAddress();
}

std::string ErrorOf(std::string_view text) {
  Result<SocketAddress> address = SocketAddress::Parse(text);
  EXPECT_FALSE(address.ok()) << text << " parsed as " << (address.ok() ? address->ToString() : "");
  return address.status().message();
}

TEST(SocketAddressTest, ParsesIpv4WithPort) {
  SocketAddress address = MustParse("127.0.0.1:80");
  EXPECT_EQ(address.family(), AF_INET);
  EXPECT_EQ(address.port(), 80);
  EXPECT_EQ(address.length(), sizeof(sockaddr_in));
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(address.sockaddr_ptr());
  EXPECT_EQ(ntohl(v4->sin_addr.s_addr), 0x7f000001u);
  EXPECT_EQ(address.ToString(), "127.0.0.1:80");
  EXPECT_TRUE(address.IsLoopback());
}

TEST(SocketAddressTest, ParsesBracketedIpv6WithPort) {
  SocketAddress address = MustParse("[::1]:0");
  EXPECT_EQ(address.family(), AF_INET6);
  EXPECT_EQ(address.port(), 0);
  EXPECT_EQ(address.length(), sizeof(sockaddr_in6));
  EXPECT_EQ(address.ToString(), "[::1]:0");
  EXPECT_TRUE(address.IsLoopback());
  EXPECT_EQ(MustParse("[2001:db8::7]:65535").port(), 65535);
}

TEST(SocketAddressTest, LocalhostMeansIpv4Loopback) {
  EXPECT_EQ(MustParse("localhost:8080").ToString(), "127.0.0.1:8080");
}

TEST(SocketAddressTest, LeadingZerosInThePortAreAccepted) {
  EXPECT_EQ(MustParse("10.0.0.1:0080").port(), 80);
}

TEST(SocketAddressTest, BadInputsNameTheProblem) {
  EXPECT_EQ(ErrorOf(""), "expected HOST:PORT, got ''");
  EXPECT_EQ(ErrorOf("127.0.0.1"), "expected HOST:PORT, got '127.0.0.1'");
  EXPECT_EQ(ErrorOf("[::1]"), "expected [IPv6]:PORT, got '[::1]'");
  EXPECT_EQ(ErrorOf("[::1]80"), "expected [IPv6]:PORT, got '[::1]80'");
  EXPECT_EQ(ErrorOf("[::1:80"), "expected [IPv6]:PORT, got '[::1:80'");
  EXPECT_EQ(ErrorOf("127.0.0.1:"), "invalid port ''");
  EXPECT_EQ(ErrorOf("127.0.0.1:65536"), "invalid port '65536'");
  EXPECT_EQ(ErrorOf("127.0.0.1:99999999999"), "invalid port '99999999999'");
  EXPECT_EQ(ErrorOf("127.0.0.1:8x"), "invalid port '8x'");
  EXPECT_EQ(ErrorOf("127.0.0.1:-1"), "invalid port '-1'");
  EXPECT_EQ(ErrorOf("127.0.0.1: 80"), "invalid port ' 80'");
  EXPECT_EQ(ErrorOf("[::1]:"), "invalid port ''");
  EXPECT_EQ(ErrorOf("example.com:80"), "not an IP address: 'example.com'");
  EXPECT_EQ(ErrorOf(":80"), "not an IP address: ''");
  EXPECT_EQ(ErrorOf("256.0.0.1:80"), "not an IP address: '256.0.0.1'");
  EXPECT_EQ(ErrorOf("[fe80::1%eth0]:80"), "not an IP address: 'fe80::1%eth0'");
}

TEST(SocketAddressTest, FromIpTakesLiteralsWithoutBrackets) {
  Result<SocketAddress> v6 = SocketAddress::FromIp("::1", 443);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->ToString(), "[::1]:443");
  Result<SocketAddress> v4 = SocketAddress::FromIp("192.168.1.20", 8);
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->ToString(), "192.168.1.20:8");
  Result<SocketAddress> bad = SocketAddress::FromIp("[::1]", 443);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "not an IP address: '[::1]'");
}

TEST(SocketAddressTest, ToStringRoundTrips) {
  for (std::string_view text :
       {"127.0.0.1:80", "0.0.0.0:0", "10.1.2.3:65535", "[::1]:0", "[::]:8080", "[2001:db8::1]:443",
        "[fe80::1:2:3:4]:1", "[::ffff:127.0.0.1]:9"}) {
    SocketAddress address = MustParse(text);
    EXPECT_EQ(address.ToString(), text);
    SocketAddress again = MustParse(address.ToString());
    EXPECT_EQ(again.length(), address.length());
    EXPECT_EQ(std::memcmp(again.sockaddr_ptr(), address.sockaddr_ptr(), address.length()), 0)
        << text;
  }
  // Non-canonical IPv6 comes back canonical, and stays so.
  EXPECT_EQ(MustParse("[0:0:0:0:0:0:0:1]:5").ToString(), "[::1]:5");
  EXPECT_EQ(MustParse("[2001:DB8:0::1]:5").ToString(), "[2001:db8::1]:5");
}

TEST(SocketAddressTest, DefaultAddressIsNoAddress) {
  SocketAddress none;
  EXPECT_EQ(none.length(), 0u);
  EXPECT_EQ(none.port(), 0);
  EXPECT_FALSE(none.IsLoopback());
  EXPECT_EQ(none.ToString(), "(unknown address)");
}

TEST(SocketAddressTest, SetPort) {
  SocketAddress v4 = MustParse("127.0.0.1:1");
  v4.set_port(8443);
  EXPECT_EQ(v4.ToString(), "127.0.0.1:8443");
  SocketAddress v6 = MustParse("[::1]:1");
  v6.set_port(0);
  EXPECT_EQ(v6.ToString(), "[::1]:0");
}

TEST(SocketAddressTest, IsLoopback) {
  EXPECT_TRUE(MustParse("127.0.0.1:1").IsLoopback());
  EXPECT_TRUE(MustParse("127.255.255.254:1").IsLoopback());
  EXPECT_TRUE(MustParse("127.1.2.3:1").IsLoopback());
  EXPECT_FALSE(MustParse("126.255.255.255:1").IsLoopback());
  EXPECT_FALSE(MustParse("128.0.0.1:1").IsLoopback());
  EXPECT_FALSE(MustParse("0.0.0.0:1").IsLoopback());
  EXPECT_FALSE(MustParse("10.0.0.1:1").IsLoopback());
  EXPECT_TRUE(MustParse("[::1]:1").IsLoopback());
  EXPECT_FALSE(MustParse("[::]:1").IsLoopback());
  EXPECT_FALSE(MustParse("[::2]:1").IsLoopback());
  EXPECT_FALSE(MustParse("[2001:db8::1]:1").IsLoopback());
}

TEST(FdTest, ClosesOnDestructionAndMoves) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[1]);
  {
    Fd a(fds[0]);
    EXPECT_TRUE(a.valid());
    Fd b(std::move(a));
    EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): moved-from is documented
    EXPECT_EQ(b.get(), fds[0]);
    Fd c;
    c = std::move(b);
    EXPECT_EQ(c.get(), fds[0]);
    EXPECT_FALSE(b.valid());  // NOLINT(bugprone-use-after-move)
  }
  EXPECT_EQ(fcntl(fds[0], F_GETFD), -1);  // closed exactly once, by c
  EXPECT_EQ(errno, EBADF);
}

TEST(FdTest, ReleaseGivesUpOwnership) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    Fd a(fds[0]);
    EXPECT_EQ(a.Release(), fds[0]);
    EXPECT_FALSE(a.valid());
  }
  EXPECT_NE(fcntl(fds[0], F_GETFD), -1);  // still open
  close(fds[0]);
  close(fds[1]);
}

TEST(ListenTest, PortZeroGetsARealPort) {
  Result<Fd> listener = Listen(MustParse("127.0.0.1:0"), /*reuse_port=*/false);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  Result<SocketAddress> local = LocalAddress(listener->get());
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ(local->family(), AF_INET);
  EXPECT_NE(local->port(), 0);
  EXPECT_EQ(local->ToString(), "127.0.0.1:" + std::to_string(local->port()));
  EXPECT_TRUE(local->IsLoopback());
  int flags = fcntl(listener->get(), F_GETFL);
  EXPECT_TRUE(flags & O_NONBLOCK);
}

TEST(ListenTest, ConnectAndAccept) {
  Result<Fd> listener = Listen(MustParse("127.0.0.1:0"), false);
  ASSERT_TRUE(listener.ok());
  // Nothing pending yet: Accept reports "try later" with an invalid Fd, not an error.
  Accepted none = Accept(listener->get());
  EXPECT_EQ(none.kind, Accepted::Kind::kNone);
  EXPECT_FALSE(none.fd.valid());

  Result<SocketAddress> local = LocalAddress(listener->get());
  ASSERT_TRUE(local.ok());
  Result<Fd> client = StartConnect(*local);
  ASSERT_TRUE(client.ok()) << client.status().message();
  pollfd writable{client->get(), POLLOUT, 0};
  ASSERT_EQ(poll(&writable, 1, 5000), 1);
  EXPECT_EQ(TakeSocketError(client->get()), 0);

  pollfd readable{listener->get(), POLLIN, 0};
  ASSERT_EQ(poll(&readable, 1, 5000), 1);
  Accepted accepted = Accept(listener->get());
  ASSERT_EQ(accepted.kind, Accepted::Kind::kConnection) << accepted.error;
  ASSERT_TRUE(accepted.fd.valid());
  EXPECT_TRUE(fcntl(accepted.fd.get(), F_GETFL) & O_NONBLOCK);
  ASSERT_EQ(write(client->get(), "hi", 2), 2);
  pollfd data{accepted.fd.get(), POLLIN, 0};
  ASSERT_EQ(poll(&data, 1, 5000), 1);
  char buf[4];
  EXPECT_EQ(read(accepted.fd.get(), buf, sizeof(buf)), 2);
  EXPECT_EQ(std::string(buf, 2), "hi");
}

TEST(ListenTest, ConnectToAClosedPortIsRefused) {
  // A bound socket that does not listen: connecting to its port is refused.
  Fd bound(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  SocketAddress any = MustParse("127.0.0.1:0");
  ASSERT_EQ(bind(bound.get(), any.sockaddr_ptr(), any.length()), 0);
  Result<SocketAddress> closed = LocalAddress(bound.get());
  ASSERT_TRUE(closed.ok());
  Result<Fd> client = StartConnect(*closed);
  if (!client.ok()) {
    // Loopback may refuse synchronously.
    EXPECT_EQ(client.status().message(), "connect " + closed->ToString() + ": Connection refused");
    return;
  }
  pollfd writable{client->get(), POLLOUT, 0};
  ASSERT_EQ(poll(&writable, 1, 5000), 1);
  EXPECT_EQ(TakeSocketError(client->get()), ECONNREFUSED);
  EXPECT_EQ(TakeSocketError(client->get()), 0);  // taking the error clears it
}

TEST(ListenTest, SecondListenerOnAPortNeedsReusePort) {
  Result<Fd> first = Listen(MustParse("127.0.0.1:0"), /*reuse_port=*/true);
  ASSERT_TRUE(first.ok());
  Result<SocketAddress> local = LocalAddress(first->get());
  ASSERT_TRUE(local.ok());
  Result<Fd> shared = Listen(*local, /*reuse_port=*/true);
  EXPECT_TRUE(shared.ok()) << shared.status().message();
  Result<Fd> taken = Listen(*local, /*reuse_port=*/false);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().message(), "bind " + local->ToString() + ": Address already in use");
}

TEST(ListenTest, Ipv6LoopbackWithPortZero) {
  Result<Fd> listener = Listen(MustParse("[::1]:0"), false);
  if (!listener.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << listener.status().message();
  Result<SocketAddress> local = LocalAddress(listener->get());
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->family(), AF_INET6);
  EXPECT_NE(local->port(), 0);
  EXPECT_EQ(local->ToString(), "[::1]:" + std::to_string(local->port()));
}

}  // namespace
}  // namespace hammer::net
