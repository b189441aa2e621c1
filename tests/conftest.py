import os

# Statistical tests and benchmarks share two cores with other work: keep BLAS single-threaded.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
