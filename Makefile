# The two commands of README.md: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Debian packages: Graphviz and fonts draw the reasoning tree (run and test); Prometheus
# (prometheus + promtool) serves the services demo and its tests — whytree starts its own
# server on a free loopback port, never the package's system service; Chromium and its
# driver open the analysis page in the browser tests (test only). Installed when missing
# and possible (root with apt-get), else one line says so and the set-up goes on.
RUN_SYSTEM_PACKAGES  := graphviz fonts-dejavu-core prometheus
TEST_SYSTEM_PACKAGES := $(RUN_SYSTEM_PACKAGES) chromium chromium-driver

.PHONY: run test test-fast lint typecheck check bench clean i18n

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

## Set up and run whytree: demo data, the doctor's table (a required part failing stops here;
## no token or LLM is "not configured", not a failure), then the Telegram bot if
## TELEGRAM_BOT_TOKEN is set, else the terminal chat.
run: $(STAMP)
	@bash scripts/system-packages.sh $(RUN_SYSTEM_PACKAGES)
	$(BIN)/whytree demo
	$(BIN)/whytree doctor
	$(BIN)/whytree run

## Set up and run every check CI runs: format, lint, types, tests.
test: $(STAMP)
	@bash scripts/system-packages.sh $(TEST_SYSTEM_PACKAGES)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy .
	$(BIN)/pytest

## The fast part of the tests, for the edit-test loop: no chaos, replica, browser, live or
## other slow test (`-m "not slow"`). `make test` and CI still run everything.
test-fast: $(STAMP)
	$(BIN)/pytest -m "not slow"

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
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
