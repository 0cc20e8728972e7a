# Sourced by scripts/test and .ci/run: make .venv and install the project into it when needed.
# Reinstalls when pyproject.toml or the lock changes, so a fresh clone and an edited dependency
# list both work.

ensure_venv() {
    local stamp=.venv/.installed-pyproject-sha256 want
    want=$(cat pyproject.toml deploy/requirements/dev.lock | sha256sum | cut -d' ' -f1)
    if [[ ! -x .venv/bin/python ]]; then
        echo "[setup] creating .venv with $(python3 --version)" >&2
        python3 -m venv .venv
    fi
    if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]] || ! .venv/bin/python -c 'import worker' 2>/dev/null; then
        echo "[setup] installing the project and its dev dependencies into .venv" >&2
        # The locked versions, hash-checked (deploy/requirements/dev.lock, scripts/lock), then the
        # project itself on top of them.
        .venv/bin/pip install --disable-pip-version-check -q -r deploy/requirements/dev.lock
        .venv/bin/pip install --disable-pip-version-check -q --no-deps -e .
        echo "$want" >"$stamp"
    fi
}
