# profiler-report: the two commands that do all set-up on a fresh machine.
#   make report   live run on a GPU with Nsight Compute; elsewhere renders the recorded H200 capture
#                 (CASE=reduction or CASE=path/to/case-folder picks the case; default: the transpose)
#   make test     installs what the tests need into .venv and runs the suite (CI runs this)
PYTHON ?= python3
VENV   ?= .venv
OUT    ?=
ARGS   ?=
CASE   ?=
CAPTURE ?=
# pytest-xdist workers for `make test` (2 CPUs here); JOBS=0 runs the suite in one process.
JOBS   ?= 2

.PHONY: report test quick check lint bench venv venv-render venv-gpu browser clean

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e ".[test]"
	touch $@

# Rendering and gating a recorded capture: the package alone (a test venv already has it).
venv-render:
	@[ -f $(VENV)/.installed ] || $(MAKE) -s $(VENV)/.installed-render

$(VENV)/.installed-render: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e .
	touch $@

# A live run: the package with CuPy and nvtx.
venv-gpu: $(VENV)/.installed-gpu

$(VENV)/.installed-gpu: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e ".[gpu]"
	touch $@

report:
	@OUT="$(OUT)" ARGS="$(ARGS)" CASE="$(CASE)" PYTHON="$(PYTHON)" VENV="$(VENV)" bash scripts/make_report.sh

test: venv browser
	$(VENV)/bin/python -m ruff check profiler_report tests scripts setup.py
	$(VENV)/bin/python -m mypy profiler_report
	$(VENV)/bin/python -m pytest -q -n $(JOBS)

# The quick loop: the tests not marked slow (no subprocess, browser, Dask, nvcc or wheel build).
quick: venv
	$(VENV)/bin/python -m pytest -q -m "not slow" -n $(JOBS)

# Debian's Chromium for tests/report/test_browser.py (Playwright drives it; no browser is downloaded):
# installed when missing and root; otherwise the browser tests skip with a note (and fail on CI).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  [ -n "$$PROFILER_REPORT_CHROMIUM" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make test: installing Debian's chromium for the browser tests (apt-get)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	      echo "make test: apt-get install chromium failed: the browser tests will be skipped"; \
	  else echo "make test: no chromium and not root: the browser tests will be skipped (apt-get install chromium)"; fi; }

# GPU only: every stage against memcpy and peer libraries, plus the size/dtype sweep.
bench:
	PYTHONPATH=$(CURDIR) $(PYTHON) -m profiler_report bench --out $(or $(OUT),bench.json) $(ARGS)

# The regression gate on CAPTURE (default: the committed report of CASE, reports/h200 for the
# transpose), with the case's thresholds.toml.
check: venv-render
	@rep="$(CAPTURE)"; \
	if [ -z "$$rep" ]; then dir=$$(bash scripts/recorded_report.sh $(VENV)/bin/python "$(CASE)") || exit $$?; \
	  rep=$$(bash scripts/report_capture.sh "$$dir"); fi; \
	if [ ! -f "$$rep" ]; then echo "make check: no capture $$rep (fix: pass CAPTURE=path/to/profile.ncu-rep, or record one: make report on a GPU)" >&2; exit 2; fi; \
	echo "profiler-report check $$rep$(if $(CASE), --case $(CASE))"; \
	$(VENV)/bin/python -m profiler_report check "$$rep" $(if $(CASE),--case "$(CASE)") $(ARGS)

lint: venv
	$(VENV)/bin/python -m ruff check profiler_report tests scripts setup.py
	$(VENV)/bin/python -m mypy profiler_report

clean:
	rm -rf $(VENV) reports/*-recorded reports/*.partial
