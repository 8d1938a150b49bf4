# Memory and descriptor hygiene of the daemon.  Included by the Makefile:
#
#	-include test/hygiene/hygiene.mk
#
#   make hygiene			valgrind runs (acquire, renew, API faults,
#					failover both ways, shutdown) and the fd/RSS
#					soak, both on the plain ./leaderd
#   make hygiene HYGIENE_SOAK_SECONDS=600	a longer soak
#   make hygiene SANITIZE=address,undefined	also the fd soak on the
#					sanitized daemon, its logs scanned for
#					sanitizer reports
#
# Valgrind cannot run a sanitized binary, so the valgrind tests always
# use a plain build: `hygiene` builds ./leaderd with SANITIZE unset.
# Figures (valgrind summaries, fd counts, RSS) are printed at the end and
# written to $(BUILD)/hygiene-figures.txt.

HYGIENE_SOAK_SECONDS	?= 60
# Two workers: the soak runs beside the valgrind rows (it bounds fds and
# RSS, not time).
HYGIENE_PYTEST		 = $(PYTHON) -m pytest -q -p no:cacheprovider -rfE -n 2

.PHONY: hygiene

hygiene: $(if $(SANITIZE),$(or $(LEADERD_TARGET),$(BUILD)/leaderd))
	@$(MAKE) --no-print-directory SANITIZE= leaderd
	@mkdir -p $(BUILD)
	cd test/hygiene && LEADERD=$(CURDIR)/leaderd \
		HYGIENE_SOAK_SECONDS=$(HYGIENE_SOAK_SECONDS) \
		HYGIENE_FIGURES=$(CURDIR)/$(BUILD)/hygiene-figures.txt \
		$(HYGIENE_PYTEST) .
ifneq ($(SANITIZE),)
# The same soak on the sanitized daemon.  RSS is not bounded there:
# AddressSanitizer's quarantine keeps freed memory by design.
	cd test/hygiene && \
		ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
		UBSAN_OPTIONS=$${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
		LEADERD=$(CURDIR)/$(or $(LEADERD_TARGET),$(BUILD)/leaderd) \
		HYGIENE_SOAK_SECONDS=$(HYGIENE_SOAK_SECONDS) \
		HYGIENE_RSS_SLACK_KB=10000000 \
		HYGIENE_FIGURES=$(CURDIR)/$(BUILD)/hygiene-figures-san.txt \
		$(HYGIENE_PYTEST) --basetemp=$(CURDIR)/$(BUILD)/pytest-hygiene \
		test_fds.py
	sh test/hygiene/sanscan.sh $(BUILD)/pytest-hygiene
endif
