#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian 12 machine (run as root).
#
#   - Debian 12's ROCm 5.2 (hipcc, clang 15, HIP runtime, hipRAND/rocRAND, hipSPARSE/rocSPARSE, rocPRIM);
#   - hipify-perl from Debian 13 (trixie): Debian 12 has none; the package is architecture `all` and needs
#     only perl, so it is unpacked into $BUILDPORT_TOOLS without touching the system's apt configuration
#     (trixie's packages come from the Debian mirror that configuration names, or deb.debian.org without one);
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

# The URI of the Debian archive the machine's apt sources use for its release ($1; default: the codename of
# /etc/os-release): the first entry, in apt's order, for the release itself or its -updates, -backports or
# -proposed-updates suite, with the main component, signed by Debian's archive keyring or not pinned to a
# keyring (unpinned ones count only when no pinned one qualifies). The -security archive and third-party
# repositories (their own keyring, or suites such as `nodistro`, `bookworm-pgdg`) are not it. Reads
# $APT_ETC (default /etc/apt): one-line `deb [opts] URI suite components` entries of sources.list and
# sources.list.d/*.list, deb822 stanzas of sources.list.d/*.sources. Prints nothing when none qualifies.
debian_mirror() {
    local etc="${APT_ETC:-/etc/apt}" codename="${1:-}" files=() file
    local LC_ALL=C  # apt reads sources.list.d in byte order
    if [ -z "$codename" ]; then
        codename="$(. /etc/os-release 2>/dev/null && printf '%s' "${VERSION_CODENAME:-}")" || codename=""
    fi
    [ -n "$codename" ] || return 0
    for file in "$etc/sources.list" "$etc"/sources.list.d/*; do
        case "$file" in
            */sources.list | *.list | *.sources) [ -f "$file" ] && files+=("$file") ;;
        esac
    done
    [ "${#files[@]}" -gt 0 ] || return 0
    awk -v codename="$codename" '
        function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
        function has(list, word,   n, i, w) {
            n = split(list, w, /[ \t]+/)
            for (i = 1; i <= n; i++) if (w[i] == word) return 1
            return 0
        }
        # One entry (its fields in `value`): remember its first URI as the best of its tier.
        function consider(   tier, n, i, u, uri, keyrings, k) {
            if (!("uris" in value) || tolower(value["enabled"]) == "no") return
            if (!has(value["types"], "deb") && !has(value["types"], "deb-src")) return
            if (!has(value["components"], "main")) return
            if (!has(value["suites"], codename) && !has(value["suites"], codename "-updates") &&
                !has(value["suites"], codename "-backports") &&
                !has(value["suites"], codename "-proposed-updates")) return
            tier = 2
            if (value["signed-by"] != "") {
                n = split(value["signed-by"], keyrings, /[ \t,]+/)
                tier = 0
                for (k = 1; k <= n; k++) if (keyrings[k] ~ /(^|\/)debian-archive-[^\/]*$/) tier = 1
                if (!tier) return
            }
            n = split(value["uris"], u, /[ \t]+/)
            for (i = 1; i <= n && uri == ""; i++) if (u[i] != "" && u[i] !~ /^cdrom:/) uri = u[i]
            sub(/\/+$/, "", uri)
            if (uri != "" && !(tier in best)) best[tier] = uri
        }
        function stanza_end() { if (deb822) consider(); split("", value); field = "" }
        FNR == 1 { stanza_end(); deb822 = FILENAME ~ /\.sources$/ }
        deb822 && /^[ \t]*$/ { stanza_end(); next }
        deb822 && /^#/ { next }
        deb822 && /^[ \t]/ { if (field != "") value[field] = trim(value[field] " " $0); next }
        deb822 {
            colon = index($0, ":")
            if (colon) { field = tolower(trim(substr($0, 1, colon - 1))); value[field] = trim(substr($0, colon + 1)) }
            next
        }
        {
            line = $0
            sub(/#.*/, "", line)
            line = trim(line)
            if (line == "") next
            split("", value)
            type = line
            sub(/[ \t].*/, "", type)
            rest = trim(substr(line, length(type) + 1))
            options = ""
            if (substr(rest, 1, 1) == "[") {
                end = index(rest, "]")
                if (!end) next
                options = substr(rest, 2, end - 2)
                rest = trim(substr(rest, end + 1))
            }
            n = split(rest, w, /[ \t]+/)
            if (n < 3) next
            value["types"] = type
            value["uris"] = w[1]
            value["suites"] = w[2]
            value["components"] = w[3]
            for (i = 4; i <= n; i++) value["components"] = value["components"] " " w[i]
            m = split(options, o, /[ \t]+/)
            for (i = 1; i <= m; i++) if (tolower(o[i]) ~ /^signed-by=/) value["signed-by"] = substr(o[i], 11)
            consider()
        }
        END {
            stanza_end()
            if (1 in best) print best[1]
            else if (2 in best) print best[2]
        }' "${files[@]}"
}

# The mirror trixie's packages come from: the machine's Debian mirror (debian_mirror [CODENAME]), or
# deb.debian.org when its apt sources name none, which the log says (on stderr: stdout is the URI).
trixie_mirror() {
    local mirror
    mirror="$(debian_mirror "$@")"
    if [ -n "$mirror" ]; then
        log "Debian trixie from $mirror, the Debian mirror of this machine's apt sources" >&2
    else
        mirror=http://deb.debian.org/debian
        log "no Debian mirror for this release in the apt sources under ${APT_ETC:-/etc/apt}; Debian trixie from $mirror" >&2
    fi
    printf '%s\n' "$mirror"
}

# Downloads PKG=VERSION ... from trixie into $1 (its .deb files replaced).
trixie_download() {
    local into="$1" entry
    shift
    mkdir -p "$TRIXIE_STATE/lists/partial" "$TRIXIE_STATE/cache/archives/partial" "$TRIXIE_STATE/sourceparts" "$into"
    entry="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(trixie_mirror) trixie main"
    if [ "$(cat "$TRIXIE_STATE/sources.list" 2>/dev/null)" != "$entry" ]; then
        printf '%s\n' "$entry" > "$TRIXIE_STATE/sources.list"
        rm -f "$TRIXIE_STATE/.updated"  # lists fetched from another mirror
    fi
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

# Sourced (the tests call its functions), it runs nothing: `return` works only in a sourced file.
if ! (return 0 2>/dev/null); then
    main "$@"
fi
