"""replay (BrainBench-Real, issue 40): captured production queries asked again of a brain version,
with the retrieval drift measured and the run decided by the database."""
