# Sourced by the scripts: where ONNX Runtime's shared library and ours are.
ort_dylib() { # ort_dylib VENV -> path of libonnxruntime.so inside that venv's onnxruntime wheel
  local capi
  capi=$("$1/bin/python" -c 'import onnxruntime, os; print(os.path.join(os.path.dirname(onnxruntime.__file__), "capi"))')
  ls "$capi"/libonnxruntime.so* | sort | tail -n 1
}
export NONZERO_ORT_LIB="${NONZERO_ORT_LIB:-$PWD/target/release/libnonzero_ort.so}"
