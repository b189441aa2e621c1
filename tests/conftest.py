import os

# Statistical tests and benchmarks share two cores with other work: keep BLAS single-threaded.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


import pytest  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    """A local one-core SparkSession per test module (the Spark test modules skip without Java);
    stopped at the end of the module, or earlier by a test that checks a stopped session."""
    from dpexplore import sources

    session = sources.local_spark_session("dpexplore-tests", "local[1]", **{
        "spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "1",
        "spark.sql.execution.arrow.pyspark.enabled": "false", "spark.driver.memory": "1g"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
