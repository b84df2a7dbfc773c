# Sourced by the scripts: where ONNX Runtime's shared library and ours are, the venv helper, and
# progress lines (on stderr, so that a command's results on stdout stay clean).

timed_step() { # timed_step "WHAT (HOW LONG)" CMD...: says what it does, runs CMD, says how long it took
  local start=$SECONDS
  printf '%s...\n' "$1" >&2
  "${@:2}"
  printf '... done in %d s\n' $((SECONDS - start)) >&2
}

ort_dylib() { # ort_dylib VENV -> path of libonnxruntime.so inside that venv's onnxruntime wheel
  local capi
  capi=$("$1/bin/python" -c 'import onnxruntime, os; print(os.path.join(os.path.dirname(onnxruntime.__file__), "capi"))')
  ls "$capi"/libonnxruntime.so* | sort | tail -n 1
}

# cache_link: venvs and build outputs kept outside the checkout (scripts/cache.sh).
. "$(dirname "${BASH_SOURCE[0]}")/cache.sh"

venv() { # venv DIR REQUIREMENTS...: a venv with exactly those pinned lists, kept until one of them changes
  # $VENV_PYTHON: the interpreter that makes it (default python3). DIR is a link into the cache
  # (scripts/cache.sh) unless the checkout has its own. A venv made by another Python version, or
  # from other lists, is made anew: installing on top would keep packages the lists no longer name.
  local dir=$1 python=${VENV_PYTHON:-python3} real
  shift
  cache_link "$dir"
  real=$(readlink -f "$dir")
  if [ -x "$real/bin/python" ] && [ -n "${VENV_PYTHON:-}" ] &&
    [ "$("$real/bin/python" -c 'import sys; print(sys.version_info[:2])')" != \
      "$("$python" -c 'import sys; print(sys.version_info[:2])')" ]; then
    rm -rf "$real"
  fi
  # The stamp is the lists' text, so a list that another includes (-r) must be named too.
  if ! cat "$@" | cmp -s - "$real/.installed-requirements" 2>/dev/null; then
    "$python" -m venv --clear "$real"
    local req args=()
    for req in "$@"; do
      args+=(-r "$req")
    done
    # pip's own lines (Collecting/Downloading/Installing) show what it is doing.
    timed_step "installing $* into $dir (pip, from PyPI or pip's cache; about a minute the first time)" \
      "$real/bin/python" -m pip install --disable-pip-version-check "${args[@]}"
    cat "$@" >"$real/.installed-requirements"
  fi
}

export NONZERO_ORT_LIB="${NONZERO_ORT_LIB:-$PWD/target/release/libnonzero_ort.so}"
