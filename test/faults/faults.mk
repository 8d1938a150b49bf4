# test/faults/faults.mk -- the fault suite (ref/reliability-performance.md
# a.5, rows F1-F26) and the soak.  Included by the top Makefile:
#
#     -include test/faults/faults.mk
#
#   make faults               the fault suite (pytest, a few minutes)
#   make soak DURATION=300    random kills of 3-5 instances for DURATION
#                             seconds; prints transitions and S1, exits
#                             non-zero on a violation (SOAK_SEED=n to
#                             repeat a run, SOAK_N=3..5 to fix the size)
#   make chaos                the chaos rows in full (docs/RELIABILITY.md,
#                             "Below the elector"): starved and frozen
#                             pods in cgroups (C1-C3), kernel partitions
#                             in network namespaces (K1-K4), then real
#                             429s from a throttled kube-apiserver
#                             (T1-T2, the e2e harness); root, about 5
#                             minutes.  make faults runs a smoke of the
#                             first two (C1, C3, K2)
#
# FAULTS_RESULTS=file appends every measured figure as a JSON line (used
# for docs/RELIABILITY.md; report: python3 test/faults/report.py file).

PYTHON		?= python3
DURATION	?= 300
SOAK_ARGS	 = --duration $(DURATION) $(if $(SOAK_SEED),--seed $(SOAK_SEED)) \
		   $(if $(SOAK_N),-n $(SOAK_N))
# Three pytest workers: a fault test mostly waits on election timings
# and has its own API server, proxies and lock, as the integration tests
# do (the suite: 268 s on two, 198 s on three with six other builds
# beside it).  The S1 checkers count only the overlaps their samples
# prove, so a sample held up on a loaded machine widens its window
# instead of inventing one.
# The figures reach the summary on the reports (conftest.py).
# FAULTS_JOBS=0 runs the suite in one process.
FAULTS_JOBS	?= 3
FAULTS_PYTEST	?= $(PYTHON) -m pytest -q -p no:cacheprovider \
		   $(if $(filter-out 0,$(FAULTS_JOBS)),-n $(FAULTS_JOBS))

.PHONY: faults soak chaos

faults: leaderd $(BUILD)/leaderd-testhooks $(BUILD)/test/elector_replay
	cd test/faults && LEADERD=$(CURDIR)/leaderd \
		LEADERD_TESTHOOKS=$(CURDIR)/$(BUILD)/leaderd-testhooks \
		$(FAULTS_PYTEST) .

soak: leaderd
	LEADERD=$(CURDIR)/leaderd $(PYTHON) test/faults/soak.py $(SOAK_ARGS)

# The chaos rows: test_cgroup.py and test_netns.py in full (CHAOS_FULL=1),
# then test/e2e's test_throttle.py against a kube-apiserver of its own
# (E2E_THROTTLE=1); CHAOS_RESULTS collects the figures as JSON lines.
CHAOS_RESULTS	?= $(BUILD)/chaos-results.jsonl
chaos: leaderd e2e-bins
	@rm -f $(CHAOS_RESULTS)
	cd test/faults && CHAOS_FULL=1 LEADERD=$(CURDIR)/leaderd \
		FAULTS_RESULTS=$(CURDIR)/$(CHAOS_RESULTS) \
		$(PYTHON) -m pytest -q -p no:cacheprovider -rs \
		test_cgroup.py test_netns.py
	@rm -rf $(BUILD)/chaos-e2e && mkdir -p $(BUILD)/chaos-e2e
	cd test/e2e && $(E2E_ENV) E2E_WORK=$(CURDIR)/$(BUILD)/chaos-e2e \
		E2E_THROTTLE=1 KUBECTL=$(E2E_BIN)/kubectl \
		$(E2E_PYTEST) -s test_throttle.py
