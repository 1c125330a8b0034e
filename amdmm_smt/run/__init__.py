"""Running many tests: collecting files, parsing them, running each under limits.

  collect.py  files under the paths given, parse, duplicate names, the model of a test
  corpus.py   a batch of tests run in order-preserving parallel; progress
  pool.py     worker processes that enforce --timeout / --memory
  cluster.py  the same tasks on a Dask cluster (`--dask`)
"""
