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

.PHONY: faults soak

faults: leaderd $(BUILD)/leaderd-testhooks $(BUILD)/test/elector_replay
	cd test/faults && LEADERD=$(CURDIR)/leaderd \
		LEADERD_TESTHOOKS=$(CURDIR)/$(BUILD)/leaderd-testhooks \
		$(FAULTS_PYTEST) .

soak: leaderd
	LEADERD=$(CURDIR)/leaderd $(PYTHON) test/faults/soak.py $(SOAK_ARGS)
