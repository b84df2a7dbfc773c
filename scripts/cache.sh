# Sourced by .ci/run and scripts/test: build outputs and venvs kept outside the checkout, so that
# a fresh clone on the same machine (CI's, each run) reuses what an earlier clone built. Each cached
# path of the checkout is a link into $NONZERO_CACHE_DIR (default ~/.cache/nonzero/checkout); what
# is cached keeps its own check of being current (cargo's fingerprints, a venv's requirements
# stamp, IREE's and ONNX Runtime's keys), so a stale entry is rebuilt, never used.
# NONZERO_CACHE_DIR=0 turns it off: every path is then made inside the checkout, as on a new machine.

NONZERO_CACHE_DIR=${NONZERO_CACHE_DIR:-$HOME/.cache/nonzero/checkout}

cache_link() { # cache_link PATH...: each PATH (relative to the checkout) a link into the cache, unless PATH exists
  [ "$NONZERO_CACHE_DIR" = 0 ] && return 0
  local rel
  for rel in "$@"; do
    if [ -e "$rel" ] || [ -L "$rel" ]; then
      continue # a directory of the checkout's own, or already linked
    fi
    mkdir -p "$NONZERO_CACHE_DIR/$rel" "$(dirname "$rel")"
    ln -s "$NONZERO_CACHE_DIR/$rel" "$rel"
  done
}

cache_trim() { # the cached cargo target dir starts afresh past NONZERO_CACHE_TARGET_GB (default 30)
  # Clones at any path reuse the same artifacts (cargo names them by the crate's path inside the
  # workspace), but each dependency version or feature set that changes leaves its old build
  # behind, so without a bound the directory only grows.
  [ "$NONZERO_CACHE_DIR" = 0 ] && return 0
  local dir=$NONZERO_CACHE_DIR/target size_gb
  [ -d "$dir" ] || return 0
  size_gb=$(du -s --block-size=1G "$dir" | cut -f1)
  if [ "$size_gb" -gt "${NONZERO_CACHE_TARGET_GB:-30}" ]; then
    echo "cache: $dir is $size_gb GB, over NONZERO_CACHE_TARGET_GB=${NONZERO_CACHE_TARGET_GB:-30}: removed, built afresh"
    rm -rf "$dir"
    mkdir -p "$dir"
  fi
}

cache_checkout() { # the paths every stage shares: cargo's target dirs (the main one, fuzz/'s)
  cache_trim
  cache_link target fuzz/target
}
