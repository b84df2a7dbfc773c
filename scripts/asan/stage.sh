# Sourced by scripts/test: the `asan` stage (not in DEFAULT_STAGES; run it before a change to
# unsafe code is submitted). The library, built with AddressSanitizer, runs the conformance pack
# and the bundled models inside a real ONNX Runtime 1.31.1, 1,000 load-unload cycles, and the
# Rust tensors past 2^32 elements run under ASan too. Any report fails the stage; there are no
# suppressions.
#
# rustc instruments a cdylib but links no runtime into it (its __asan_* symbols stay undefined):
# the host process brings one. Both hosts work, and the stage runs both:
# - `nonzero run` built the same way, linked with --export-dynamic: rustc links the runtime into
#   the executable but exports none of it, and without the flag the dlopen'ed library fails with
#   "undefined symbol: __asan_option_detect_stack_use_after_return". Leaks are checked here.
# - Python with the runtime preloaded. rustc ships it only as a static archive, so asan_runtime
#   links it into a shared object (without asan_preinit.o, whose .preinit_array a shared object
#   may not have, and with libstdc++, so that the __cxa_throw interceptor finds the real one when
#   ONNX Runtime throws). Debian's GCC runtime works too: LD_PRELOAD="libasan.so.8 libstdc++.so.6".
# The library stays mapped until exit because it pins itself at its first registration, as the
# shipped one does (crates/onnx-adapter/src/pin.rs; no -z nodelete here any more): ONNX Runtime
# unloads it when the session options go, and reports made at exit (leaks) could not name its
# frames otherwise. The pin also keeps its op tables and domains, built once for the life of the
# process, reachable from its statics. `nonzero run` makes one session per model, so its run
# over the pack is itself a load-unload loop (before the pin, LD_DEBUG showed one load per model:
# 8 for the 8 bundled models; now 1). A library that did not pin itself loses its tables at every
# unload: with pin_once made a no-op, LeakSanitizer reported 16,560 bytes in 128 allocations over
# the 8 bundled models, every frame an <unknown module> (the library was gone by exit). The stage
# also runs `nonzero run --load-unload 1000` (issue 39): 1,000 cycles of new session options that
# register the library by path, each with a session per model; it must stay loaded throughout.
#
# Telling a report of ONNX Runtime's own allocations apart: the pinned library is mapped at exit,
# so a frame of ours is symbolized in libnonzero_ort.so and ONNX Runtime's in libonnxruntime.so;
# an <unknown module> frame means something was unloaded. A leak is ours when its allocation
# stack has a frame of ours (or an unknown module) above ONNX Runtime's: ONNX Runtime calls into
# the library (RegisterCustomOps, kernel creation, compute), so its frames sit under ours in
# every stack of ours. Today there is nothing to tell apart (0 reports from either), and any
# report fails the stage: there are no suppressions. A suppression of ONNX Runtime's module
# (`leak:libonnxruntime.so` in LSAN_OPTIONS=suppressions=FILE) would hide ours too, since a
# suppression matches any frame of the stack: with it, the leak control below (a leak in the
# canary's RegisterCustomOps, under ONNX Runtime's RegisterCustomOpsLibrary) was reported as
# suppressed instead. Should ONNX Runtime ever leak, suppress its function at the top of the
# stack by name, in LSAN_OPTIONS, which the leak control then runs under too: it fails the stage
# if the suppression hides a leak of ours.
ASAN_TARGET=x86_64-unknown-linux-gnu
ASAN_DIR=$ROOT/target/asan
ASAN_LOGS=$ROOT/build/asan/logs

asan_cargo() { # asan_cargo SUBCOMMAND ARGS... [-- RUSTC ARGS]: cargo with AddressSanitizer, an explicit
  # target (so build scripts and proc macros are built without it) and a target dir of its own
  local sub=$1
  shift
  RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address" \
    cargo "$sub" --target "$ASAN_TARGET" --target-dir "$ASAN_DIR" "$@"
}

asan_runtime() { # build/asan/librustc_asan.so from the toolchain's librustc-*_rt.asan.a
  local archive objects
  archive=$(ls "$(rustc --print sysroot)/lib/rustlib/$ASAN_TARGET/lib/"librustc-*_rt.asan.a | head -n 1)
  if [ build/asan/librustc_asan.so -nt "$archive" ]; then
    return
  fi
  objects=$(mktemp -d)
  (cd "$objects" && ar x "$archive" && rm -f asan_preinit.cpp.o)
  gcc -shared -o build/asan/librustc_asan.so "$objects"/*.o -Wl,--no-as-needed -lstdc++ -lpthread -ldl -lm -lrt
  rm -rf "$objects"
}

asan_python() { # asan_python ARGS...: .venv's Python with the runtime preloaded
  # detect_leaks=0 in the Python host only: CPython and ONNX Runtime keep allocations until exit
  # on purpose, and a leak suppression for their frames would also hide leaks of ours made under
  # them. Leaks are checked by the `nonzero run` host and the Rust tests below.
  ASAN_OPTIONS="detect_leaks=0:log_path=$ASAN_LOGS/asan" LD_PRELOAD="$ROOT/build/asan/librustc_asan.so" \
    .venv/bin/python "$@"
}

asan_nonzero() { # asan_nonzero ARGS...: the ASan build of `nonzero` (leaks checked at exit)
  ASAN_OPTIONS="log_path=$ASAN_LOGS/asan" "$ASAN_DIR/$ASAN_TARGET/release/nonzero" "$@"
}

asan_reports() { # 0 when the sanitizer wrote a report, with its first lines shown
  compgen -G "$ASAN_LOGS/asan*" >/dev/null || return 1
  grep -h -m 3 -E "ERROR: AddressSanitizer|ERROR: LeakSanitizer|#[01] " "$ASAN_LOGS"/asan* | cut -c1-200
}

asan_expect_canary() { # asan_expect_canary HOST...: the canary, registered by that host, is reported
  rm -f "$ASAN_LOGS"/asan*
  if "$@" >/dev/null 2>&1; then
    echo "asan: the canary's overflow was not caught (exit 0): $*" >&2
    exit 1
  fi
  if ! asan_reports | grep -q "heap-buffer-overflow" || ! grep -q "in RegisterCustomOps" "$ASAN_LOGS"/asan*; then
    echo "asan: the canary's overflow was not reported with its frame: $*" >&2
    exit 1
  fi
  rm -f "$ASAN_LOGS"/asan*
}

asan_expect_leak() { # asan_expect_leak HOST...: the canary's leak control is reported, by name
  rm -f "$ASAN_LOGS"/asan*
  if NONZERO_ASAN_CANARY_LEAK=1 "$@" >/dev/null 2>&1; then
    echo "asan: the canary's leak was not reported (exit 0): $*" >&2
    exit 1
  fi
  if ! grep -q "ERROR: LeakSanitizer" "$ASAN_LOGS"/asan* ||
    ! grep -qE "in RegisterCustomOps .*libnonzero_asan_canary.so" "$ASAN_LOGS"/asan* ||
    ! grep -q "1234 byte(s) leaked" "$ASAN_LOGS"/asan*; then
    echo "asan: the canary's leak was not reported with its frames: $*" >&2
    exit 1
  fi
  rm -f "$ASAN_LOGS"/asan*
}

asan_no_reports() {
  if asan_reports; then
    echo "asan: $(ls "$ASAN_LOGS" | wc -l) report(s) in $ASAN_LOGS" >&2
    exit 1
  fi
  echo "asan: 0 reports"
}

stage_asan() {
  setup
  mkdir -p build/asan
  rm -rf "$ASAN_LOGS"
  mkdir -p "$ASAN_LOGS"
  step "asan: libnonzero_ort.so (CPU-only), nonzero and the canary with -Zsanitizer=address (target/asan)"
  asan_cargo rustc --release -p nonzero-ort --no-default-features --lib --crate-type cdylib
  asan_cargo rustc --release -p nonzero-cli --bin nonzero -- -C link-arg=-Wl,--export-dynamic
  asan_cargo build --release --manifest-path scripts/asan/canary/Cargo.toml
  asan_runtime
  local lib=$ASAN_DIR/$ASAN_TARGET/release/libnonzero_ort.so
  local canary=$ASAN_DIR/$ASAN_TARGET/release/libnonzero_asan_canary.so
  nm -D "$lib" | grep -q ' U __asan_init$' || { echo "asan: $lib is not instrumented" >&2; exit 1; }

  step "asan: the positive control, a library that overflows in RegisterCustomOps, in both hosts"
  asan_expect_canary asan_nonzero run --quiet --library "$canary" models/nonzero_opset13_float
  asan_expect_canary asan_python -c "import onnxruntime as o; o.SessionOptions().register_custom_ops_library('$canary')"
  echo "asan: both hosts reported the canary's heap-buffer-overflow in RegisterCustomOps"

  step "asan: the leak control, a library that leaks 1,234 bytes in RegisterCustomOps (pinned, as ours)"
  asan_expect_leak asan_nonzero run --quiet --library "$canary" models/nonzero_opset13_float
  echo "asan: LeakSanitizer reported the canary's leak at exit, in RegisterCustomOps of libnonzero_asan_canary.so"

  step "asan: bundled models + conformance pack through \`nonzero run\` (ASan build, ONNX Runtime 1.31.1)"
  asan_nonzero run --quiet --library "$lib" models build/conformance || { asan_reports; exit 1; }
  asan_no_reports

  step "asan: 1,000 load-unload cycles in \`nonzero run --load-unload\` (2 models a cycle; leaks checked at exit)"
  local out line
  out=$(asan_nonzero run --quiet --library "$lib" --load-unload 1000 models/nonzero_opset13_float \
    models/masked_select_opset13) || { echo "$out"; asan_reports; exit 1; }
  line=$(grep '^load-unload: ' <<<"$out")
  echo "$line"
  # Resident memory is not judged here: ASan's quarantine holds freed memory (+25 MB over 1,000 cycles).
  if ! grep -q '^load-unload: 1000 cycles x 2 models: 2000 matched, 0 failed; ' <<<"$line" ||
    ! grep -q 'library loaded before the first cycle: no; after every cycle: yes$' <<<"$line"; then
    echo "asan: the load-unload loop failed, or the library did not stay loaded" >&2
    exit 1
  fi
  asan_no_reports

  step "asan: conformance pack, bundled models, library and nonzero-domain tests (pytest, ONNX Runtime 1.31.1)"
  NONZERO_ORT_LIB=$lib asan_python -m pytest -q tests/python/test_conformance.py \
    tests/python/test_models.py tests/python/test_library.py tests/python/test_nonzero_domain.py ||
    { asan_reports; exit 1; }
  asan_no_reports

  if [ "${NONZERO_HUGE_TESTS:-1}" != 0 ]; then
    step "asan: tensors past 2^32 elements (Rust, --ignored; peak RSS bound ${NONZERO_ASAN_HUGE_PEAK_GIB:-12} GiB)"
    # A test binary is an executable: rustc links the runtime in, and leaks are checked at exit.
    NONZERO_HUGE_PEAK_GIB=${NONZERO_ASAN_HUGE_PEAK_GIB:-12} ASAN_OPTIONS="log_path=$ASAN_LOGS/asan" \
      asan_cargo test --release --manifest-path tests/reliability/rust/Cargo.toml \
      --test huge_tensors -- --ignored --test-threads=1 --nocapture || { asan_reports; exit 1; }
    asan_no_reports
  else
    echo "huge-tensor tests not run under ASan (NONZERO_HUGE_TESTS=0)"
  fi
}
