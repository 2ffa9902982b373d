# Compute cap sources (relative to src/). All of them are in cudacap_core
# too: setup/gate/cost/capture/watcher reach the driver, NVML and the hook layer
# only through the port (cap/port.h), so the archive links alone; the
# multi-process tests pull the pure pieces (bucket, controller, election,
# sampling lock, region).
set(CC_COMPUTE_SOURCES
  cap/bucket.c
  cap/controller.c
  cap/elastic.c
  cap/election.c
  cap/sampling_lock.c
  cap/compute_region.c
  cap/capture.c
  cap/cost.c
  cap/compute_setup.c
  cap/gate.c
  cap/watcher.c
)
