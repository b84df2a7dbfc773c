#!/usr/bin/env bash
# Sourced by scripts/package and the `platforms` test stage: installs, once and idempotently,
# what cross-building and running the Linux aarch64 and Windows x86_64 artifacts needs:
#   - rustup targets aarch64-unknown-linux-gnu and x86_64-pc-windows-gnu;
#   - Debian: mingw-w64 (the Windows linker, with its runtime linked statically), Wine 8.0,
#     the aarch64 cross gcc and glibc/libstdc++ (qemu's -L sysroot), and qemu-user 10 from
#     bookworm-backports (bookworm's 7.2 crashes inside ONNX Runtime's CPU detection).
# zig (the glibc 2.28 linker) comes from requirements/build.txt, like the x86_64 build's.
PLATFORM_TARGETS=(aarch64-unknown-linux-gnu x86_64-pc-windows-gnu)
PLATFORM_APT=(gcc-mingw-w64-x86-64 wine64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross libc6-arm64-cross libstdc++6-arm64-cross)

platforms_setup() {
  local missing=() pkg target
  for target in "${PLATFORM_TARGETS[@]}"; do
    if ! rustup target list --installed | grep -qx "$target"; then
      rustup target add "$target"
    fi
  done
  for pkg in "${PLATFORM_APT[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  if ! qemu_user_is_new_enough; then
    if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
      echo "deb http://deb.debian.org/debian bookworm-backports main" |
        $sudo tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
    fi
    missing+=(qemu-user/bookworm-backports)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "apt-get install ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

qemu_user_is_new_enough() { # qemu-aarch64 8 or newer (7.2 crashes in ORT's cpuinfo)
  command -v qemu-aarch64 >/dev/null || return 1
  local major
  major=$(qemu-aarch64 --version | sed -n 's/^qemu-aarch64 version \([0-9]*\)\..*/\1/p')
  [ -n "$major" ] && [ "$major" -ge 8 ]
}
