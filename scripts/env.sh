# Sourced by the scripts: where ONNX Runtime's shared library and ours are, and the venv helper.
ort_dylib() { # ort_dylib VENV -> path of libonnxruntime.so inside that venv's onnxruntime wheel
  local capi
  capi=$("$1/bin/python" -c 'import onnxruntime, os; print(os.path.join(os.path.dirname(onnxruntime.__file__), "capi"))')
  ls "$capi"/libonnxruntime.so* | sort | tail -n 1
}

venv() { # venv DIR REQUIREMENTS...: a venv with those pinned lists, kept until one of them changes
  local dir=$1
  shift
  if [ ! -x "$dir/bin/python" ]; then
    python3 -m venv "$dir"
  fi
  # The stamp is the lists' text, so a list that another includes (-r) must be named too.
  if ! cat "$@" | cmp -s - "$dir/.installed-requirements" 2>/dev/null; then
    local req args=()
    for req in "$@"; do
      args+=(-r "$req")
    done
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "${args[@]}"
    cat "$@" >"$dir/.installed-requirements"
  fi
}

export NONZERO_ORT_LIB="${NONZERO_ORT_LIB:-$PWD/target/release/libnonzero_ort.so}"
