# Compute cap sources (relative to src/). The pure pieces (bucket,
# controller, election, sampling lock, region) are what multi-process tests
# link from cudacap_core; gate/cost/watcher use the hook layer and are only
# pulled into libcudacap.so.
set(CC_COMPUTE_SOURCES
  cap/bucket.c
  cap/controller.c
  cap/elastic.c
  cap/election.c
  cap/sampling_lock.c
  cap/compute_region.c
  cap/capture.c
  cap/cost.c
  cap/gate.c
  cap/watcher.c
)
