"""Spark's start-up chatter stays out of notebooks (notebook 09 used to store pink stderr boxes).

``local_spark_session`` gives the JVM an ERROR-level log4j configuration and filters the JVM's
own "WARNING: Using incubator modules" line from the stderr it inherits; real errors still pass.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from dpexplore.sources import _spark_engine

CHILD = r"""
import os, subprocess, sys, time
from dpexplore.sources import _spark_engine
handles = _spark_engine._filtered_stderr()
# a child process started meanwhile (the JVM) inherits the filtered stderr for its lifetime
proc = subprocess.Popen([sys.executable, "-c",
    "import sys, time; time.sleep(0.3); "
    "sys.stderr.write('WARNING: Using incubator modules: jdk.incubator.vector\\n'); "
    "sys.stderr.write('Setting default log level to \"WARN\".\\n'); "
    "sys.stderr.write('ERROR real trouble\\n'); sys.stderr.flush()"])
_spark_engine._restore_stderr(handles)
proc.wait()
time.sleep(0.5)
sys.stderr.write("after restore\n")
"""


def test_filtered_stderr_drops_only_the_start_up_noise():
    err = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60).stderr
    assert "ERROR real trouble" in err and "after restore" in err
    assert "incubator" not in err and "Setting default log level" not in err


def test_log4j_configuration_is_error_level():
    path = _spark_engine._log4j2_file()
    text = open(path).read()
    assert "rootLogger.level = error" in text and "org.apache.spark.repl.Main" in text


@pytest.mark.slow
@pytest.mark.skipif(_spark_engine.find_java() is None, reason="Spark needs Java")
def test_a_local_session_starts_without_warnings_on_stderr():
    pytest.importorskip("pyspark")
    code = ("import warnings; warnings.simplefilter('ignore'); from dpexplore import sources; "
            "s = sources.local_spark_session('quiet', 'local[1]'); print(s.range(3).count()); s.stop()")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.stdout.strip().endswith("3"), run.stderr[-2000:]
    assert "WARN" not in run.stderr and "log4j profile" not in run.stderr, run.stderr[-2000:]
