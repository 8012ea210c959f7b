#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian 12 machine (run as root).
#
#   - Debian 12's ROCm 5.2 (hipcc, clang 15, HIP runtime, hipRAND/rocRAND, hipSPARSE/rocSPARSE, rocPRIM);
#   - hipify-perl from Debian 13 (trixie): Debian 12 has none; the package is architecture `all` and needs
#     only perl, so it is unpacked into $BUILDPORT_TOOLS without touching the system's apt configuration;
#   - rocThrust and hipCUB from trixie, with the rocPRIM they need (5.7; Debian 12 has neither library and
#     rocPRIM 5.3): header-only packages of architecture `all` that compile with ROCm 5.2's HIP, installed as
#     packages (dpkg) so builds find them where a user's would, in /usr/include and /usr/share/cmake;
#   - the CUDA 13 libraries (cuRAND, cuSPARSE, nvJitLink) the original nvcc builds link against, from
#     NVIDIA's PyPI wheels, into $BUILDPORT_TOOLS/cuda-libs;
#   - this package with its test extras, editable.
#
# Idempotent: every step checks whether it is already done. Needs network access to the Debian mirrors
# and PyPI only. nvcc itself is expected on PATH already (the machine image provides CUDA 13).
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
TOOLS="${BUILDPORT_TOOLS:-/opt/buildport-tools}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MULTIARCH=/usr/lib/x86_64-linux-gnu

APT_PACKAGES=(
    hipcc libamdhip64-dev rocm-device-libs rocm-cmake
    libhiprand-dev librocrand-dev libhipsparse-dev librocsparse-dev librocprim-dev
    cmake make g++ perl
)
HIPIFY_VERSION="6.0.2+dfsg-1"   # Debian 13's hipify-perl; pinned so a point release cannot change the tests
# Debian 13's header-only ROCm libraries, pinned likewise (rocPRIM replaces Debian 12's 5.3, which hipCUB
# 5.7 cannot use; nothing else depends on it).
TRIXIE_HEADERS=(librocprim-dev=5.7.1-2 librocthrust-dev=5.7.1-3 libhipcub-dev=5.7.1-3)
# The CUDA 13.0 releases of the libraries, matching the image's nvcc 13.0.
CUDA_WHEELS=(nvidia-curand==10.4.0.35 nvidia-cusparse==12.6.3.3 nvidia-nvjitlink==13.0.88)

log() { printf '[setup] %s\n' "$*"; }

install_apt_packages() {
    local missing=()
    local pkg
    for pkg in "${APT_PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        log "apt packages already installed"
        return
    fi
    log "installing apt packages: ${missing[*]}"
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${APT_PACKAGES[@]}"
}

TRIXIE_STATE="$TOOLS/apt-trixie"

# apt-get with a private state whose only source is trixie: the system keeps its bookworm configuration.
trixie_apt() {
    apt-get -o "Dir::Etc::sourcelist=$TRIXIE_STATE/sources.list" -o "Dir::Etc::sourceparts=$TRIXIE_STATE/sourceparts" \
        -o "Dir::State::Lists=$TRIXIE_STATE/lists" -o "Dir::Cache=$TRIXIE_STATE/cache" \
        -o "APT::Get::List-Cleanup=0" -o "APT::Sandbox::User=root" "$@"
}

# Downloads PKG=VERSION ... from trixie into $1 (its .deb files replaced).
trixie_download() {
    local into="$1"
    shift
    mkdir -p "$TRIXIE_STATE/lists/partial" "$TRIXIE_STATE/cache/archives/partial" "$TRIXIE_STATE/sourceparts" "$into"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
        > "$TRIXIE_STATE/sources.list"
    if [ ! -f "$TRIXIE_STATE/.updated" ]; then
        trixie_apt update -q
        touch "$TRIXIE_STATE/.updated"
    fi
    rm -f "$into"/*.deb
    (cd "$into" && trixie_apt download "$@")
}

install_hipify_perl() {
    local dest="$TOOLS/hipify"
    local stamp="$dest/.installed-$HIPIFY_VERSION"
    if [ ! -f "$stamp" ]; then
        log "fetching hipify-perl $HIPIFY_VERSION from Debian trixie"
        trixie_download "$TRIXIE_STATE/debs" "hipify-perl=$HIPIFY_VERSION"
        rm -rf "$dest"
        mkdir -p "$dest"
        dpkg -x "$TRIXIE_STATE"/debs/hipify-perl_*.deb "$dest"
        touch "$stamp"
    else
        log "hipify-perl $HIPIFY_VERSION already unpacked"
    fi
    local exe
    exe="$(find "$dest/usr" -name hipify-perl \( -type f -o -type l \) | head -n 1)"
    if [ -z "$exe" ]; then
        echo "hipify-perl not found in the unpacked package under $dest" >&2
        exit 1
    fi
    ln -sfn "$exe" /usr/local/bin/hipify-perl
}

install_trixie_headers() {
    local spec pkg missing=()
    for spec in "${TRIXIE_HEADERS[@]}"; do
        pkg="${spec%%=*}"
        if [ "$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null)" != "install ok installed ${spec#*=}" ]; then
            missing+=("$spec")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        log "rocPRIM, rocThrust and hipCUB from trixie already installed"
        return
    fi
    log "installing from Debian trixie: ${missing[*]}"
    trixie_download "$TRIXIE_STATE/headers" "${TRIXIE_HEADERS[@]}"
    dpkg -i "$TRIXIE_STATE"/headers/*.deb
}

install_cuda_libs() {
    local dest="$TOOLS/cuda-libs"
    local stamp="$dest/.installed"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${CUDA_WHEELS[*]}" ]; then
        log "CUDA library wheels already installed"
        return
    fi
    log "installing CUDA library wheels: ${CUDA_WHEELS[*]}"
    rm -rf "$dest"
    python3 -m pip install -q --no-deps --no-compile --target "$dest" "${CUDA_WHEELS[@]}"
    # The wheels ship only versioned sonames; the linker (and find_library) wants the plain names.
    local lib so
    for lib in "$dest"/nvidia/cu13/lib/lib*.so.*; do
        so="${lib%.so.*}.so"
        [ -e "$so" ] || ln -s "$(basename "$lib")" "$so"
    done
    printf '%s' "${CUDA_WHEELS[*]}" > "$stamp"
}

make_hip_lang_root() {
    # CMake 3.25's HIP language looks for <root>/lib/cmake/hip-lang; Debian installs it under the
    # multiarch directory, so a small root of links stands in for /opt/rocm.
    local root="$TOOLS/rocm-root"
    mkdir -p "$root/lib/cmake"
    ln -sfn "$MULTIARCH/cmake/hip-lang" "$root/lib/cmake/hip-lang"
}

install_python_package() {
    log "installing buildport (editable) with test extras"
    (cd "$REPO_ROOT" && python3 -m pip install -q -e '.[test]')
}

main() {
    local start=$SECONDS
    mkdir -p "$TOOLS"
    install_apt_packages
    install_hipify_perl
    install_trixie_headers
    install_cuda_libs
    make_hip_lang_root
    install_python_package
    command -v nvcc >/dev/null || log "warning: nvcc is not on PATH; the original-side e2e builds will fail"
    log "done in $((SECONDS - start)) s"
}

main "$@"
