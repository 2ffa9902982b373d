# Compute cap sources (relative to src/). All of them are in cudacap_core
# too: setup/gate/cost/capture/watcher reach the driver, NVML and the hook layer
# only through the port (cap/port.h), so the archive links alone; the
# multi-process tests pull the pure pieces (bucket, controller, election,
# sampling lock, region).
set(CC_COMPUTE_SOURCES
  cap/compute/bucket.c
  cap/compute/controller.c
  cap/compute/elastic.c
  cap/compute/election.c
  cap/compute/sampling_lock.c
  cap/compute/compute_region.c
  cap/compute/capture.c
  cap/compute/cost.c
  cap/compute/compute_setup.c
  cap/compute/gate.c
  cap/compute/nvml_sample.c
  cap/compute/nvml_clock.c
  cap/compute/refill.c
  cap/compute/watcher.c
  cap/compute/compute_live.c
)
