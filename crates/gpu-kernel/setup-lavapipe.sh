#!/usr/bin/env bash
# Installs Mesa's lavapipe (a CPU Vulkan driver) so wgpu finds an adapter on machines without a
# GPU. Idempotent: does nothing when the driver and loader are already installed.
set -euo pipefail

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

if installed mesa-vulkan-drivers && installed libvulkan1; then
    echo "lavapipe: mesa-vulkan-drivers and libvulkan1 already installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends mesa-vulkan-drivers libvulkan1
echo "lavapipe: installed"
