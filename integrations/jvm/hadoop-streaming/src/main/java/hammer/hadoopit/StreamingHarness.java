package hammer.hadoopit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.mapred.JobID;
import org.apache.hadoop.mapred.RunningJob;
import org.apache.hadoop.mapreduce.Cluster;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.CounterGroup;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.streaming.StreamJob;
import org.apache.hadoop.util.ToolRunner;

/**
 * Runs Hadoop Streaming jobs for the integration tests, in local mode (LocalJobRunner, file://)
 * or on an in-process MiniDFSCluster (1 datanode) + MiniMRYarnCluster (1 NodeManager).
 *
 * <p>Usage: {@code StreamingHarness --mode local|mini --work DIR}. The cluster is started once;
 * then every line on stdin is one job request (JSON), answered by one JSON line on stdout once the
 * job has finished. Hadoop's own logging goes to stderr. Request:
 *
 * <pre>
 * {"name": "load", "inputs": ["/abs/urls.txt"], "output": "/abs/local/out",
 *  "args": ["-D", "k=v", ..., "-mapper", "/abs/hammer load -c 10", "-reducer", "..."]}
 * </pre>
 *
 * The harness copies the inputs into the job's file system (HDFS on the mini cluster), appends
 * {@code -input}/{@code -output}, runs {@code ToolRunner.run(conf, new StreamJob(), args)}, then
 * copies every file of the job's output directory into the local "output" directory. Reply:
 *
 * <pre>
 * {"name": "load", "rc": 0, "job_id": "job_...", "seconds": 12.3, "files": ["part-00000", ...],
 *  "counters": {"error": {"http_5xx": 6, ...}, "org.apache.hadoop.mapreduce.TaskCounter": {...}}}
 * </pre>
 *
 * Counters come from the job's own counter API: {@code RunningJob.getCounters()} on the job that
 * StreamJob submitted, or (if that client is already closed) {@code Cluster.getJob(id)
 * .getCounters()}, which on YARN reads the finished job from the JobHistoryServer. A line
 * {@code {"quit": true}} or EOF stops the clusters and exits.
 */
public final class StreamingHarness {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** StreamJob keeps the submitted job in protected fields; this exposes them. */
  static final class ObservedStreamJob extends StreamJob {
    RunningJob runningJob() {
      return running_;
    }

    JobID jobId() {
      return jobId_;
    }
  }

  private final String mode;
  private final File work;
  private Configuration baseConf;
  private MiniDFSCluster dfs;
  private MiniMRYarnCluster yarn;
  private FileSystem fs;
  private Path jobsRoot;

  private StreamingHarness(String mode, File work) {
    this.mode = mode;
    this.work = work;
  }

  public static void main(String[] argv) throws Exception {
    String mode = "local";
    String workDir = null;
    for (int i = 0; i < argv.length; i++) {
      switch (argv[i]) {
        case "--mode" -> mode = argv[++i];
        case "--work" -> workDir = argv[++i];
        default -> {
          System.err.println("usage: StreamingHarness --mode local|mini --work DIR");
          System.exit(2);
        }
      }
    }
    if (workDir == null || !(mode.equals("local") || mode.equals("mini"))) {
      System.err.println("usage: StreamingHarness --mode local|mini --work DIR");
      System.exit(2);
    }
    // stdout is the request/reply channel: nothing else may write to it.
    PrintStream replies =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err);

    File work = new File(workDir).getAbsoluteFile();
    Files.createDirectories(work.toPath());
    StreamingHarness harness = new StreamingHarness(mode, work);
    int status = 0;
    try {
      long t0 = System.nanoTime();
      harness.start();
      ObjectNode ready = JSON.createObjectNode();
      ready.put("ready", true);
      ready.put("mode", mode);
      ready.put("default_fs", harness.fs.getUri().toString());
      ready.put("seconds", (System.nanoTime() - t0) / 1e9);
      replies.println(JSON.writeValueAsString(ready));

      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode request = JSON.readTree(line);
        if (request.path("quit").asBoolean(false)) {
          break;
        }
        ObjectNode reply;
        try {
          reply = harness.runJob(request);
        } catch (Throwable e) {
          e.printStackTrace();
          reply = JSON.createObjectNode();
          reply.put("name", request.path("name").asText());
          reply.put("rc", -1);
          reply.put("exception", e.toString());
        }
        replies.println(JSON.writeValueAsString(reply));
      }
    } catch (Throwable e) {
      e.printStackTrace();
      ObjectNode failed = JSON.createObjectNode();
      failed.put("ready", false);
      failed.put("exception", e.toString());
      replies.println(JSON.writeValueAsString(failed));
      status = 1;
    } finally {
      // A graceful stop of the mini clusters kills leftover containers within ~2 s, then the
      // NodeManager's log handler waits 10 s for its scheduled log deletions. Every daemon lives
      // in this JVM, so after 5 s exit anyway (task logs then stay in the work directory).
      long t0 = System.nanoTime();
      Thread stopper = new Thread(harness::stop, "harness-stop");
      stopper.setDaemon(true);
      stopper.start();
      stopper.join(5_000);
      System.err.printf("harness %s after %.1f s%n",
          stopper.isAlive() ? "exits without waiting for the stop" : "stopped",
          (System.nanoTime() - t0) / 1e9);
    }
    System.exit(status);
  }

  private void start() throws Exception {
    Configuration conf = new Configuration();
    conf.set("hadoop.tmp.dir", new File(work, "hadoop-tmp").getPath());
    if (mode.equals("local")) {
      conf.set("mapreduce.framework.name", "local");
      conf.set("fs.defaultFS", "file:///");
      conf.set("mapreduce.jobtracker.staging.root.dir", new File(work, "staging").getPath());
      conf.set("mapreduce.cluster.local.dir", new File(work, "mapred-local").getPath());
      baseConf = conf;
      fs = FileSystem.getLocal(conf);
      jobsRoot = new Path(new File(work, "jobs").toURI());
    } else {
      // The mini clusters' test utilities put their directories under test.build.data
      // (default target/test/data relative to the working directory).
      System.setProperty("test.build.data", new File(work, "test-data").getPath());
      System.setProperty("hadoop.log.dir", new File(work, "logs").getPath());
      pinToLoopback(conf);
      // run.sh preloads loopback_bind (src/main/c) for the servers Hadoop binds to the wildcard
      // address whatever the configuration; the ApplicationMaster and task containers get it too.
      String preload = System.getenv("LD_PRELOAD");
      if (preload != null && !preload.isEmpty()) {
        for (String key :
            new String[] {"yarn.app.mapreduce.am.env", "mapreduce.map.env", "mapreduce.reduce.env"}) {
          conf.set(key, "LD_PRELOAD=" + preload);
        }
      }
      conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(work, "dfs").getPath());
      conf.set("dfs.datanode.data.dir.perm", "700");
      dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true).build();
      dfs.waitActive();
      conf.set("fs.defaultFS", dfs.getFileSystem().getUri().toString());

      // Small containers for a 2-core machine; no virtual/physical memory policing.
      conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 4096);
      conf.setInt("yarn.scheduler.minimum-allocation-mb", 128);
      conf.setInt("yarn.app.mapreduce.am.resource.mb", 512);
      conf.setInt("mapreduce.map.memory.mb", 384);
      conf.setInt("mapreduce.reduce.memory.mb", 384);
      // Container JVMs start faster with C1 only and the serial collector.
      String fastJvm = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true";
      conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m " + fastJvm);
      conf.set("mapreduce.map.java.opts", "-Xmx256m " + fastJvm);
      conf.set("mapreduce.reduce.java.opts", "-Xmx256m " + fastJvm);
      conf.setBoolean("yarn.nodemanager.vmem-check-enabled", false);
      conf.setBoolean("yarn.nodemanager.pmem-check-enabled", false);
      conf.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 0.5f);
      conf.setFloat(
          "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", 99.5f);
      // Shorter heartbeats and polls: the defaults (1 s, 5 s) dominate small jobs.
      conf.setInt("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", 200);
      conf.setInt("yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms", 200);
      conf.setInt("mapreduce.client.progressmonitor.pollinterval", 200);
      conf.setInt("mapreduce.client.completion.pollinterval", 200);
      conf.setInt("yarn.nodemanager.delete.debug-delay-sec", 0);
      // On shutdown the NodeManager waits for finished applications to be cleaned up for up to
      // sleep-delay-before-sigkill + process-kill-wait (+1 s) per round.
      conf.setInt("yarn.nodemanager.sleep-delay-before-sigkill.ms", 100);
      conf.setInt("yarn.nodemanager.process-kill-wait.ms", 500);

      yarn = new MiniMRYarnCluster("hammer-streaming-it", 1);
      yarn.init(conf);
      yarn.start();
      baseConf = new Configuration(yarn.getConfig());
      fs = FileSystem.get(baseConf);
      jobsRoot = new Path("/jobs");
    }
  }

  /**
   * Every address and bind host the mini clusters read, pinned to 127.0.0.1 (port 0: any free
   * port): a test must not listen beyond loopback, and Hadoop's defaults bind several servers to
   * 0.0.0.0 (yarn.nodemanager.webapp.address, the JobHistoryServer's addresses). The *.bind-host
   * keys decide where a server binds, the *.address keys what it advertises. Key names:
   * hdfs-default.xml, yarn-default.xml and mapred-default.xml of Hadoop 3.4. Three servers take
   * no address setting (the ShuffleHandler, the ApplicationMaster's client service and task
   * umbilical): src/main/c/loopback_bind.c pins those.
   */
  static void pinToLoopback(Configuration conf) {
    String host = "127.0.0.1";
    String any = host + ":0";
    for (String key :
        new String[] {
          "dfs.namenode.rpc-bind-host",
          "dfs.namenode.servicerpc-bind-host",
          "dfs.namenode.lifeline.rpc-bind-host",
          "dfs.namenode.http-bind-host",
          "dfs.namenode.https-bind-host",
          "yarn.resourcemanager.bind-host",
          "yarn.nodemanager.bind-host",
          "yarn.timeline-service.bind-host",
          "mapreduce.jobhistory.bind-host",
          "yarn.resourcemanager.hostname",
          "yarn.nodemanager.hostname",
          "yarn.timeline-service.hostname",
          "mapreduce.jobhistory.hostname",
        }) {
      conf.set(key, host);
    }
    for (String key :
        new String[] {
          "dfs.namenode.http-address",
          "dfs.namenode.https-address",
          "dfs.namenode.secondary.http-address",
          "dfs.namenode.secondary.https-address",
          "dfs.namenode.backup.address",
          "dfs.namenode.backup.http-address",
          "dfs.datanode.address",
          "dfs.datanode.http.address",
          "dfs.datanode.https.address",
          "dfs.datanode.ipc.address",
          "yarn.resourcemanager.address",
          "yarn.resourcemanager.scheduler.address",
          "yarn.resourcemanager.resource-tracker.address",
          "yarn.resourcemanager.admin.address",
          "yarn.resourcemanager.webapp.address",
          "yarn.resourcemanager.webapp.https.address",
          "yarn.nodemanager.address",
          "yarn.nodemanager.localizer.address",
          "yarn.nodemanager.webapp.address",
          "yarn.nodemanager.webapp.https.address",
          "yarn.nodemanager.collector-service.address",
          "yarn.nodemanager.amrmproxy.address",
          "yarn.timeline-service.address",
          "yarn.timeline-service.webapp.address",
          "yarn.timeline-service.webapp.https.address",
          "mapreduce.jobhistory.address",
          "mapreduce.jobhistory.admin.address",
          "mapreduce.jobhistory.webapp.address",
          "mapreduce.jobhistory.webapp.https.address",
        }) {
      conf.set(key, any);
    }
  }

  private void stop() {
    long t0 = System.nanoTime();
    try {
      if (yarn != null) {
        yarn.stop();
      }
    } catch (Exception e) {
      e.printStackTrace();
    }
    long t1 = System.nanoTime();
    try {
      if (dfs != null) {
        dfs.shutdown(true);
      }
    } catch (Exception e) {
      e.printStackTrace();
    }
    System.err.printf("stopped yarn in %.1f s, dfs in %.1f s%n", (t1 - t0) / 1e9,
        (System.nanoTime() - t1) / 1e9);
  }

  private ObjectNode runJob(JsonNode request) throws Exception {
    String name = request.path("name").asText("job");
    if (!name.matches("[A-Za-z0-9_.-]+")) {
      throw new IllegalArgumentException("job name must be [A-Za-z0-9_.-]+: " + name);
    }
    File localOut = new File(request.path("output").asText());
    List<String> args = new ArrayList<>();
    for (JsonNode a : request.path("args")) {
      args.add(a.asText());
    }

    Path jobDir = new Path(jobsRoot, name);
    fs.delete(jobDir, true);
    Path inDir = new Path(jobDir, "in");
    Path outDir = new Path(jobDir, "out");
    fs.mkdirs(inDir);
    for (JsonNode input : request.path("inputs")) {
      File f = new File(input.asText());
      Path dst = new Path(inDir, f.getName());
      fs.copyFromLocalFile(false, true, new Path(f.toURI()), dst);
      args.add("-input");
      args.add(dst.toString());
    }
    args.add("-output");
    args.add(outDir.toString());

    Configuration conf = new Configuration(baseConf);
    ObservedStreamJob streamJob = new ObservedStreamJob();
    long t0 = System.nanoTime();
    int rc = ToolRunner.run(conf, streamJob, args.toArray(new String[0]));
    double seconds = (System.nanoTime() - t0) / 1e9;

    ObjectNode reply = JSON.createObjectNode();
    reply.put("name", name);
    reply.put("rc", rc);
    reply.put("seconds", seconds);
    JobID id = streamJob.jobId();
    reply.put("job_id", id == null ? null : id.toString());
    if (id != null) {
      reply.set("counters", countersJson(readCounters(streamJob, conf, id)));
    }

    ArrayNode files = reply.putArray("files");
    if (localOut.exists()) {
      deleteRecursively(localOut);
    }
    Files.createDirectories(localOut.toPath());
    if (fs.exists(outDir)) {
      FileStatus[] listing = fs.listStatus(outDir);
      Arrays.sort(listing, (a, b) -> a.getPath().getName().compareTo(b.getPath().getName()));
      for (FileStatus st : listing) {
        String fileName = st.getPath().getName();
        if (!st.isFile() || fileName.startsWith(".")) {
          continue; // .crc side files of the local file system
        }
        fs.copyToLocalFile(false, st.getPath(), new Path(new File(localOut, fileName).toURI()), true);
        files.add(fileName);
      }
    }
    return reply;
  }

  /** The job's counters, from the RunningJob StreamJob submitted or, failing that, the cluster. */
  private static Counters readCounters(ObservedStreamJob streamJob, Configuration conf, JobID id)
      throws Exception {
    RunningJob running = streamJob.runningJob();
    if (running != null) {
      try {
        org.apache.hadoop.mapred.Counters old = running.getCounters();
        if (old != null) {
          return new Counters(old);
        }
      } catch (Exception e) {
        System.err.println("RunningJob.getCounters failed, asking the cluster: " + e);
      }
    }
    Cluster cluster = new Cluster(conf);
    try {
      Job job = cluster.getJob(id);
      if (job == null) {
        throw new IOException("cluster does not know job " + id);
      }
      return job.getCounters();
    } finally {
      cluster.close();
    }
  }

  private static ObjectNode countersJson(Counters counters) {
    Map<String, Map<String, Long>> sorted = new TreeMap<>();
    for (CounterGroup group : counters) {
      Map<String, Long> values = sorted.computeIfAbsent(group.getName(), k -> new TreeMap<>());
      for (Counter c : group) {
        values.put(c.getName(), c.getValue());
      }
    }
    ObjectNode out = JSON.createObjectNode();
    sorted.forEach(
        (g, values) -> {
          ObjectNode node = out.putObject(g);
          values.forEach(node::put);
        });
    return out;
  }

  private static void deleteRecursively(File f) throws IOException {
    File[] children = f.listFiles();
    if (children != null) {
      for (File c : children) {
        deleteRecursively(c);
      }
    }
    Files.deleteIfExists(f.toPath());
  }
}
