"""A local Spark (pyspark from pip) for the integration tests: local[N], no UI, loopback only.

The JVM is the JDK 17 whatever JAVA_HOME says (a newer JDK on the machine is not for Spark 3.5);
the Python workers are this interpreter. The previous environment is restored on exit.
"""
import contextlib
import os
import sys

import prerequisites

JAVA17_HOME = prerequisites.JAVA17_HOME

_PINNED = {
    "JAVA_HOME": JAVA17_HOME,
    "PYSPARK_PYTHON": sys.executable,
    "PYSPARK_DRIVER_PYTHON": sys.executable,
    "SPARK_LOCAL_IP": "127.0.0.1",
    "SPARK_LOCAL_HOSTNAME": "localhost",
}


def require_spark():
    """pyspark (scripts/jvm-deps.sh spark) and the JDK 17 are installed."""
    prerequisites.require_java17()
    prerequisites.require_module("pyspark", "make deps-test (scripts/jvm-deps.sh spark)")


@contextlib.contextmanager
def spark_context(app_name, cores=2):
    require_spark()
    from pyspark.sql import SparkSession

    saved = {k: os.environ.get(k) for k in _PINNED}
    os.environ.update(_PINNED)
    spark = None
    try:
        spark = (SparkSession.builder
                 .master(f"local[{cores}]")
                 .appName(app_name)
                 .config("spark.ui.enabled", "false")
                 .config("spark.driver.host", "127.0.0.1")
                 .config("spark.driver.bindAddress", "127.0.0.1")
                 .config("spark.sql.shuffle.partitions", "4")
                 .config("spark.driver.memory", "1g")
                 .config("spark.task.maxFailures", "1")   # a retried task would resend load
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        yield spark.sparkContext
    finally:
        if spark is not None:
            spark.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
