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

venv() { # venv DIR REQUIREMENTS...: a venv with those pinned lists, kept until one of them changes
  # $VENV_PYTHON: the interpreter that makes it (default python3); a venv made by another
  # Python version is made anew.
  local dir=$1 python=${VENV_PYTHON:-python3}
  shift
  if [ -x "$dir/bin/python" ] && [ -n "${VENV_PYTHON:-}" ] &&
    [ "$("$dir/bin/python" -c 'import sys; print(sys.version_info[:2])')" != \
      "$("$python" -c 'import sys; print(sys.version_info[:2])')" ]; then
    rm -rf "$dir"
  fi
  if [ ! -x "$dir/bin/python" ]; then
    "$python" -m venv "$dir"
  fi
  # The stamp is the lists' text, so a list that another includes (-r) must be named too.
  if ! cat "$@" | cmp -s - "$dir/.installed-requirements" 2>/dev/null; then
    local req args=()
    for req in "$@"; do
      args+=(-r "$req")
    done
    # pip's own lines (Collecting/Downloading/Installing) show what it is doing.
    timed_step "installing $* into $dir (pip, from PyPI or pip's cache; about a minute the first time)" \
      "$dir/bin/python" -m pip install --disable-pip-version-check "${args[@]}"
    cat "$@" >"$dir/.installed-requirements"
  fi
}

export NONZERO_ORT_LIB="${NONZERO_ORT_LIB:-$PWD/target/release/libnonzero_ort.so}"
