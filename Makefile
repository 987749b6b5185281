# The two commands of README.md: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# `make run` needs only the product; the dev extras (linters, the test model server that
# builds for ~10 min on a fresh machine) come with `make test`.
RUN_STAMP := $(VENV)/.installed-run

# Debian packages: Graphviz and fonts draw the reasoning tree (run and test); Prometheus
# (prometheus + promtool) serves the services demo and its tests — whytree starts its own
# server on a free loopback port, never the package's system service; Alertmanager
# (prometheus-alertmanager) is started the same way by the alert tests, the alerts bench
# (bot/alerts/alertmanager_runner.py; installed with the lab's packages below); Chromium and its
# driver open the analysis page in the browser tests (test only). Installed when missing
# and possible (root with apt-get), else one line says so and the set-up goes on.
RUN_SYSTEM_PACKAGES  := graphviz fonts-dejavu-core prometheus
# The live lab (`whytree lab`, docs/lab.md): Alertmanager, the standard exporters, stress-ng;
# the system lab's front proxy and cart store with their exporters (`lab up --system`).
LAB_SYSTEM_PACKAGES  := prometheus-alertmanager prometheus-node-exporter \
	prometheus-process-exporter prometheus-blackbox-exporter prometheus-postgres-exporter stress-ng \
	nginx redis-server prometheus-nginx-exporter prometheus-redis-exporter
TEST_SYSTEM_PACKAGES := $(RUN_SYSTEM_PACKAGES) $(LAB_SYSTEM_PACKAGES) chromium chromium-driver \
	systemd-journal-remote

.PHONY: run test test-fast lint typecheck check bench clean i18n peers

# The field's baselines (`whytree bench live --peers`, lab/system/peers.py): RCAEval's BARO
# and N-Sigma from PyPI in an environment of their own, with only what those two import
# (lab/system/peers-requirements.txt, pinned), RCAEval itself without its "default" extra.
PEERS_VENV    := .venv-peers
PEERS_STAMP   := $(PEERS_VENV)/.installed
PEERS_RCAEVAL := rcaeval==1.8.1
$(PEERS_STAMP): lab/system/peers-requirements.txt
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install --quiet -r lab/system/peers-requirements.txt
	$(PEERS_VENV)/bin/pip install --quiet --no-deps $(PEERS_RCAEVAL)
	touch $(PEERS_STAMP)

peers: $(PEERS_STAMP)

# llama-cpp-python (a dev dependency: the tests' real model server) builds from source,
# ~10 min on 2 cores. Built with PORTABLE CPU flags, never -march=native: the CPU here
# advertises AVX-512 and AMX, and a native build crashed with "invalid opcode" on the very
# machine that built it (AMX needs a permission from the kernel that a VM may not grant).
# The wheel is built once into LLAMA_WHEELS, only when none is there, and every set-up
# installs from there (the venv's pip.conf points pip at it and prefers it to a newer
# source release, so `pip install -e .[dev]` in the venv never rebuilds it natively).
LLAMA_CPP_VERSION := 0.3.36
LLAMA_WHEELS      := $(HOME)/.cache/whytree/wheels
LLAMA_CMAKE_ARGS  := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
	-DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
	-DGGML_AMX_BF16=OFF -DGGML_AVX_VNNI=OFF -DGGML_BMI2=ON

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	printf '[global]\nfind-links = %s\nprefer-binary = true\n' "$(LLAMA_WHEELS)" > $(VENV)/pip.conf
	$(BIN)/pip install --quiet --upgrade pip
	@mkdir -p "$(LLAMA_WHEELS)"
	@ls "$(LLAMA_WHEELS)"/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1 || { \
		echo "building llama-cpp-python $(LLAMA_CPP_VERSION) with portable CPU flags (~10 min, once)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel --quiet --no-deps \
			-w "$(LLAMA_WHEELS)" llama-cpp-python==$(LLAMA_CPP_VERSION); }
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --find-links "$(LLAMA_WHEELS)" \
		--prefer-binary -e ".[dev]"
	touch $(STAMP)

$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

## Set up and run whytree: demo data, the doctor's table (a required part failing stops here;
## no token or LLM is "not configured", not a failure), then the Telegram bot if
## TELEGRAM_BOT_TOKEN is set, else the terminal chat.
run: $(RUN_STAMP)
	@bash scripts/system-packages.sh $(RUN_SYSTEM_PACKAGES)
	$(BIN)/whytree demo
	$(BIN)/whytree doctor
	$(BIN)/whytree run

## Set up and run every check CI runs: format, lint, types, tests. pytest ends with the
## 25 slowest tests and the suite's time (docs/development.md has the figures). The tests
## run in TEST_WORKERS processes (pytest-xdist): most of a test's time is waiting on a
## subprocess, a server or PostgreSQL, so three share two cores well.
TEST_WORKERS ?= 3
test: $(STAMP) $(PEERS_STAMP)
	@bash scripts/system-packages.sh $(TEST_SYSTEM_PACKAGES)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy .
	$(BIN)/pytest -n $(TEST_WORKERS) --durations=25

## The fast part of the tests, for the edit-test loop: no chaos, replica, browser, live or
## other slow test (`-m "not slow"`). `make test` and CI still run everything.
test-fast: $(STAMP) $(PEERS_STAMP)
	$(BIN)/pytest -n $(TEST_WORKERS) -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Translations: extract the texts (English msgids) from the code, merge them into every
## language's catalogue, compile the catalogues (the .mo files are committed). The keywords:
## the core's gettext(language, msgid) / ngettext(language, s, p, n) /
## pgettext(language, context, msgid) / N_(msgid) and
## aiogram's _(msgid) / __(msgid) in the bot.
I18N_DIR      := reasoning_core/i18n/locales
I18N_KEYWORDS := -k gettext:2 -k ngettext:2,3 -k pgettext:2c,3 -k N_ -k _:1,1t -k _:1,2 -k __:1,1t -k __:1,2
i18n: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg --no-default-keywords $(I18N_KEYWORDS) \
		--no-location --sort-output --omit-header -o $(I18N_DIR)/whytree.pot .
	$(BIN)/pybabel update -i $(I18N_DIR)/whytree.pot -d $(I18N_DIR) -D whytree \
		--no-fuzzy-matching --ignore-obsolete --ignore-pot-creation-date
	$(BIN)/pybabel compile -d $(I18N_DIR) -D whytree --statistics

clean:
	rm -rf $(VENV) $(PEERS_VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
