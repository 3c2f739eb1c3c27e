package hammer.oscluster;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Starts an N-node OpenSearch 2.19 cluster (default 3) in this JVM, HTTP and transport on
 * 127.0.0.1, and serves a line protocol on stdin/stdout. See README.md for the protocol.
 *
 * <p>OpenSearch classes are only touched after {@link #main} has set the system properties that
 * must be in place before they load.
 */
public final class OpenSearchCluster {
  private static final String LOOPBACK = "127.0.0.1";

  /** The process's real stdout: LogConfigurator later points System.out at log4j. */
  private static final PrintStream OUT =
      new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

  private final Options options;
  private final Path base;
  private final List<NodeSlot> slots = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5))
          .version(HttpClient.Version.HTTP_1_1)
          .build();
  private boolean shutDown;

  /** One node: its fixed settings and, while it runs, the live node. */
  private static final class NodeSlot {
    final String name;
    final int httpPort;
    final int transportPort;
    Object settings; // org.opensearch.common.settings.Settings, kept untyped until classes load
    EmbeddedNode node;

    NodeSlot(String name, int httpPort, int transportPort) {
      this.name = name;
      this.httpPort = httpPort;
      this.transportPort = transportPort;
    }
  }

  static final class Options {
    Path data;
    int nodes = 3;
    String clusterName = "hammer-it";
    int processors = 1;
    List<Integer> httpPorts;
    List<Integer> transportPorts;
    Map<String, String> extra = new LinkedHashMap<>();
    int readyTimeoutSeconds = 120;
    /** Transport addresses of a running cluster to join; empty: bootstrap a new cluster. */
    List<String> join = new ArrayList<>();
    int firstNode = 1;
  }

  public static void main(String[] args) throws Exception {
    Options options;
    try {
      options = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("opensearch-cluster: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    // What the distribution's jvm.options / SystemJvmOptions set, where it can still be set here.
    setDefault("java.locale.providers", "SPI,COMPAT");
    setDefault("log4j2.disable.jmx", "true");
    setDefault("log4j.shutdownHookEnabled", "false");
    setDefault("io.netty.allocator.numDirectArenas", "0");
    setDefault("opensearch.set.netty.runtime.available.processors", "false");
    new OpenSearchCluster(options).run();
  }

  static final String USAGE =
      String.join(
          "\n",
          "usage: java -jar opensearch-cluster.jar --data DIR [--nodes N] [--cluster-name NAME]",
          "         [--processors P] [--http-ports P1,P2,..] [--transport-ports P1,P2,..]",
          "         [--ready-timeout SECONDS] [--setting key=value]...",
          "         [--join HOST:PORT,.. --first-node N]",
          "Ports default to free loopback ports. stdin commands: stop NODE | start NODE | quit.");

  private static void setDefault(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  static Options parse(String[] args) {
    Options o = new Options();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        System.out.println(USAGE);
        System.exit(0);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("missing value for " + a);
      }
      String v = args[++i];
      switch (a) {
        case "--data" -> o.data = Path.of(v).toAbsolutePath();
        case "--nodes" -> o.nodes = Integer.parseInt(v);
        case "--cluster-name" -> o.clusterName = v;
        case "--processors" -> o.processors = Integer.parseInt(v);
        case "--http-ports" -> o.httpPorts = ports(v);
        case "--transport-ports" -> o.transportPorts = ports(v);
        case "--ready-timeout" -> o.readyTimeoutSeconds = Integer.parseInt(v);
        case "--join" -> o.join = List.of(v.split(","));
        case "--first-node" -> o.firstNode = Integer.parseInt(v);
        case "--setting" -> {
          int eq = v.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("--setting wants key=value, got " + v);
          }
          o.extra.put(v.substring(0, eq), v.substring(eq + 1));
        }
        default -> throw new IllegalArgumentException("unknown option " + a);
      }
    }
    if (o.data == null) {
      throw new IllegalArgumentException("--data is required");
    }
    if (o.nodes < 1) {
      throw new IllegalArgumentException("--nodes must be >= 1");
    }
    if (o.httpPorts != null && o.httpPorts.size() != o.nodes) {
      throw new IllegalArgumentException("--http-ports needs " + o.nodes + " ports");
    }
    if (o.transportPorts != null && o.transportPorts.size() != o.nodes) {
      throw new IllegalArgumentException("--transport-ports needs " + o.nodes + " ports");
    }
    return o;
  }

  private static List<Integer> ports(String v) {
    List<Integer> out = new ArrayList<>();
    for (String p : v.split(",")) {
      out.add(Integer.parseInt(p.trim()));
    }
    return out;
  }

  OpenSearchCluster(Options options) {
    this.options = options;
    this.base = options.data;
  }

  private void run() throws Exception {
    Files.createDirectories(base);
    List<Integer> httpPorts = options.httpPorts;
    List<Integer> transportPorts = options.transportPorts;
    if (httpPorts == null || transportPorts == null) {
      List<Integer> free = freePorts(2 * options.nodes);
      if (httpPorts == null) {
        httpPorts = free.subList(0, options.nodes);
      }
      if (transportPorts == null) {
        transportPorts = free.subList(options.nodes, 2 * options.nodes);
      }
    }
    for (int i = 0; i < options.nodes; i++) {
      slots.add(
          new NodeSlot(
              "node-" + (options.firstNode + i), httpPorts.get(i), transportPorts.get(i)));
    }

    configureLogging();
    Runtime.getRuntime().addShutdownHook(new Thread(this::shutdown, "opensearch-cluster-shutdown"));

    for (NodeSlot slot : slots) {
      slot.settings = nodeSettings(slot);
    }
    // All nodes at once: node-1 bootstraps the cluster (it is the only initial cluster-manager
    // node), the others find it through the seed hosts and join. Constructing the nodes in
    // parallel is what makes start-up fast; InternalTestCluster does the same.
    ExecutorService pool = Executors.newFixedThreadPool(slots.size());
    try {
      List<Future<?>> started = new ArrayList<>();
      for (NodeSlot slot : slots) {
        started.add(pool.submit(() -> {
          startNode(slot);
          return null;
        }));
      }
      for (Future<?> f : started) {
        f.get();
      }
    } catch (Exception e) {
      fail("start-up failed: " + rootMessage(e), e);
    } finally {
      pool.shutdown();
    }
    for (NodeSlot slot : slots) {
      announce(slot);
    }
    String nodes = nodeCount(slots.size());
    String health =
        health(
            "wait_for_nodes=" + nodes + "&wait_for_status=green&timeout="
                + options.readyTimeoutSeconds + "s");
    if (health == null || !health.contains("\"timed_out\":false")) {
      fail(
          "cluster did not become green with " + nodes.replace("%3E%3D", ">=") + " nodes: "
              + health,
          null);
    }
    OUT.println("cluster ready");

    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      line = line.trim();
      if (line.isEmpty()) {
        continue;
      }
      if (line.equals("quit") || line.equals("exit")) {
        break;
      }
      try {
        command(line);
      } catch (Exception e) {
        OUT.println("error " + line + ": " + rootMessage(e));
      }
    }
    shutdown();
    System.exit(0);
  }

  private void command(String line) throws Exception {
    String[] words = line.split("\\s+");
    if (words.length == 2 && (words[0].equals("stop") || words[0].equals("start"))) {
      NodeSlot slot = slot(words[1]);
      if (words[0].equals("stop")) {
        stopNode(slot);
      } else {
        restartNode(slot);
      }
      return;
    }
    throw new IllegalArgumentException("unknown command (stop NODE | start NODE | quit)");
  }

  private NodeSlot slot(String name) {
    for (NodeSlot s : slots) {
      if (s.name.equals(name)) {
        return s;
      }
    }
    throw new IllegalArgumentException("no node named " + name);
  }

  /**
   * The wait_for_nodes value for `local` running nodes of this JVM: exactly that many in a
   * cluster of its own; when joining, at least that many plus one per joined address.
   */
  private String nodeCount(int local) {
    // ">=N", URL-encoded for the query string.
    return options.join.isEmpty()
        ? String.valueOf(local)
        : "%3E%3D" + (local + options.join.size());
  }

  /**
   * The cluster's node count as the first running node of this JVM sees it, nodes of other JVMs
   * that joined included; this JVM's running nodes when none answers.
   */
  private int clusterNodes() {
    String health = health("timeout=30s");
    var m =
        health == null
            ? null
            : java.util.regex.Pattern.compile("\"number_of_nodes\":(\\d+)").matcher(health);
    return m != null && m.find() ? Integer.parseInt(m.group(1)) : runningCount();
  }

  private int runningCount() {
    int n = 0;
    for (NodeSlot s : slots) {
      if (s.node != null) {
        n++;
      }
    }
    return n;
  }

  /** Closes one node as a clean shutdown would, then waits until the others see it gone. */
  private void stopNode(NodeSlot slot) throws Exception {
    int before = clusterNodes();
    synchronized (this) {
      if (shutDown) {
        return;
      }
      if (slot.node == null) {
        throw new IllegalStateException(slot.name + " is not running");
      }
      closeNode(slot);
    }
    if (runningCount() > 0) {
      health("wait_for_nodes=" + (before - 1) + "&timeout=30s");
    }
    OUT.println(slot.name + " stopped");
  }

  private void restartNode(NodeSlot slot) throws Exception {
    int before = clusterNodes();
    synchronized (this) {
      if (shutDown) {
        return;
      }
      if (slot.node != null) {
        throw new IllegalStateException(slot.name + " is already running");
      }
      startNode(slot);
    }
    announce(slot);
    health("wait_for_nodes=" + (before + 1) + "&timeout=" + options.readyTimeoutSeconds + "s");
    OUT.println(slot.name + " started");
  }

  private void startNode(NodeSlot slot) throws Exception {
    org.opensearch.common.settings.Settings settings =
        (org.opensearch.common.settings.Settings) slot.settings;
    EmbeddedNode node = new EmbeddedNode(settings, plugins());
    try {
      node.start();
    } catch (Exception e) {
      node.close();
      throw e;
    }
    slot.node = node;
  }

  private static void closeNode(NodeSlot slot) throws Exception {
    EmbeddedNode node = slot.node;
    slot.node = null;
    node.close();
    if (!node.awaitClose(30, TimeUnit.SECONDS)) {
      OUT.println("warning " + slot.name + " did not close within 30s");
    }
  }

  private void announce(NodeSlot slot) {
    EmbeddedNode node = slot.node;
    var httpAddress =
        node.injector()
            .getInstance(org.opensearch.http.HttpServerTransport.class)
            .boundAddress()
            .publishAddress();
    var transport = node.injector().getInstance(org.opensearch.transport.TransportService.class);
    var local = transport.getLocalNode();
    OUT.println(
        slot.name + " http " + httpAddress.getAddress() + ":" + httpAddress.getPort()
            + " transport " + local.getAddress().getAddress() + ":" + local.getAddress().getPort()
            + " id " + local.getId());
  }

  /** Closes every running node; safe to call twice (stdin EOF and the shutdown hook). */
  private void shutdown() {
    synchronized (this) {
      if (shutDown) {
        return;
      }
      shutDown = true;
      // Never hang the caller: if closing stalls, halt.
      Thread watchdog =
          new Thread(
              () -> {
                try {
                  Thread.sleep(60_000);
                  OUT.println("warning closing took over 60s, halting");
                  Runtime.getRuntime().halt(1);
                } catch (InterruptedException ignored) {
                  // closed in time
                }
              },
              "opensearch-cluster-watchdog");
      watchdog.setDaemon(true);
      watchdog.start();
      List<Thread> closers = new ArrayList<>();
      for (NodeSlot slot : slots) {
        if (slot.node != null) {
          Thread t =
              new Thread(
                  () -> {
                    try {
                      closeNode(slot);
                    } catch (Exception e) {
                      OUT.println("warning closing " + slot.name + ": " + rootMessage(e));
                    }
                  },
                  "close-" + slot.name);
          t.start();
          closers.add(t);
        }
      }
      for (Thread t : closers) {
        try {
          t.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      watchdog.interrupt();
      OUT.println("cluster stopped");
    }
  }

  private void fail(String message, Exception cause) {
    OUT.println("error " + message);
    if (cause != null) {
      cause.printStackTrace(new PrintStream(new FileOutputStream(FileDescriptor.err), true));
    }
    System.err.println("opensearch-cluster: logs in " + base.resolve("logs"));
    shutdown();
    System.exit(1);
  }

  /** GET _cluster/health?query on the first running node; null when no node answers. */
  private String health(String query) {
    for (NodeSlot slot : slots) {
      if (slot.node == null) {
        continue;
      }
      try {
        HttpRequest req =
            HttpRequest.newBuilder(
                    URI.create("http://" + LOOPBACK + ":" + slot.httpPort + "/_cluster/health?" + query))
                .timeout(Duration.ofSeconds(options.readyTimeoutSeconds + 10L))
                .GET()
                .build();
        HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
        return resp.body().replace(" ", "");
      } catch (Exception e) {
        // try the next node
      }
    }
    return null;
  }

  /** The modules every distribution has that a bulk/search test may touch. */
  private static List<Class<? extends org.opensearch.plugins.Plugin>> plugins() {
    return List.of(
          org.opensearch.transport.Netty4Plugin.class,
          org.opensearch.analysis.common.CommonAnalysisPlugin.class,
          org.opensearch.index.mapper.MapperExtrasPlugin.class,
          org.opensearch.index.reindex.ReindexPlugin.class);
  }

  private Object nodeSettings(NodeSlot slot) throws Exception {
    Path home = base.resolve(slot.name);
    // The plugin service scans these even when every plugin comes from the classpath.
    Files.createDirectories(home.resolve("modules"));
    Files.createDirectories(home.resolve("plugins"));
    Files.createDirectories(home.resolve("config"));
    List<String> seeds = new ArrayList<>(options.join);
    for (NodeSlot s : slots) {
      seeds.add(LOOPBACK + ":" + s.transportPort);
    }
    var b =
        org.opensearch.common.settings.Settings.builder()
            .put("cluster.name", options.clusterName)
            .put("node.name", slot.name)
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", base.resolve("logs").toString())
            .put("network.host", LOOPBACK)
            .put("http.port", slot.httpPort)
            .put("transport.port", slot.transportPort)
            .putList("discovery.seed_hosts", seeds)
            // Netty's processor count is JVM-wide: every node must claim the same number.
            .put("node.processors", options.processors)
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            // Three nodes share one heap; keep the per-node caches modest.
            .put("indices.queries.cache.size", "5%")
            .put("indices.fielddata.cache.size", "10%");
    if (options.join.isEmpty()) {
      // A new cluster: its first node bootstraps it. Joining nodes must not (they would
      // bootstrap a second cluster of their own).
      b.putList("cluster.initial_cluster_manager_nodes", slots.get(0).name);
    }
    for (Map.Entry<String, String> e : options.extra.entrySet()) {
      b.put(e.getKey(), e.getValue());
    }
    return b.build();
  }

  /** One log4j configuration for the JVM: <data>/logs/<cluster>.log, nothing on the console. */
  private void configureLogging() throws Exception {
    Path config = base.resolve("config");
    Files.createDirectories(config);
    Files.createDirectories(base.resolve("logs"));
    try (InputStream in = OpenSearchCluster.class.getResourceAsStream("log4j2.properties")) {
      Files.copy(in, config.resolve("log4j2.properties"), StandardCopyOption.REPLACE_EXISTING);
    }
    org.opensearch.common.logging.LogConfigurator.registerErrorListener();
    var settings =
        org.opensearch.common.settings.Settings.builder()
            .put("cluster.name", options.clusterName)
            .put("path.home", base.toString())
            .put("path.logs", base.resolve("logs").toString())
            .build();
    var env = new org.opensearch.env.Environment(settings, config);
    org.opensearch.common.logging.LogConfigurator.configure(env);
  }

  private static List<Integer> freePorts(int count) throws Exception {
    List<ServerSocket> held = new ArrayList<>();
    List<Integer> ports = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK));
        held.add(s);
        ports.add(s.getLocalPort());
      }
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
    return ports;
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getClass().getSimpleName() + ": " + t.getMessage();
  }
}
