"""``.ci/setup.sh``: the Debian mirror it fetches trixie's packages from is the machine's own, read from its apt
sources (``debian_mirror``, run here against apt folders made up for each case, ``APT_ETC``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="setup.sh is a bash script")

SETUP = Path(__file__).resolve().parents[1] / ".ci" / "setup.sh"
MIRROR = "http://mirror.example/debian"

#: A Debian 12 image's debian.sources, with a mirror of its own.
DEBIAN_SOURCES = f"""\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: {MIRROR}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

#: Repositories that are not Debian's, some naming the release as their suite.
THIRD_PARTY = {
    "docker.list": "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] "
                   "https://download.docker.com/linux/debian bookworm stable\n",
    "google-cloud-sdk.list": "deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n",
    "hashicorp.list": "deb [signed-by=/usr/share/keyrings/hashicorp-archive-keyring.gpg] "
                      "https://apt.releases.hashicorp.com bookworm main\n",
    "nodesource.sources": "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n"
                          "Components: main\nSigned-By: /usr/share/keyrings/nodesource.gpg\n",
    "pgdg.list": "deb http://apt.postgresql.org/pub/repos/apt bookworm-pgdg main\n",
    "0-security.sources": "Types: deb\nURIs: http://security.debian.org/debian-security\n"
                          "Suites: bookworm-security\nComponents: main contrib\n"
                          "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
}


def apt_etc(root: Path, files: dict[str, str]) -> Path:
    """An apt configuration folder holding ``files`` (``sources.list``, ``sources.list.d/NAME``)."""
    etc = root / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    for name, text in files.items():
        (etc / name if name == "sources.list" else etc / "sources.list.d" / name).write_text(text)
    return etc


def run(function: str, etc: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``function args`` of setup.sh (sourced, which runs nothing else), apt's configuration read from ``etc``."""
    done = subprocess.run(["bash", "-c", 'source "$1" && shift && "$@"', "bash", str(SETUP), function, *args],
                          env={**os.environ, "APT_ETC": str(etc)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def mirror(etc: Path, codename: str = "bookworm") -> str:
    return run("debian_mirror", etc, codename).stdout


def test_deb822_sources(tmp_path: Path) -> None:
    assert mirror(apt_etc(tmp_path, {"debian.sources": DEBIAN_SOURCES})) == MIRROR + "\n"


def test_one_line_sources(tmp_path: Path) -> None:
    etc = apt_etc(tmp_path, {"sources.list": (
        "# deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_]/ bookworm main\n"
        "deb http://security.debian.org/debian-security bookworm-security main\n"
        f"deb-src {MIRROR}/ bookworm main\n"  # a trailing slash goes
        f"deb {MIRROR}/ bookworm main non-free-firmware  # the main archive\n"
        f"deb {MIRROR}/ bookworm-updates main\n"
    )})
    assert mirror(etc) == MIRROR + "\n"


def test_one_line_entry_with_options(tmp_path: Path) -> None:
    etc = apt_etc(tmp_path, {"debian.list": (
        f"deb [ arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg ] {MIRROR} bookworm-updates main\n"
    )})
    assert mirror(etc) == MIRROR + "\n"


def test_a_mirror_other_than_deb_debian_org_wins_over_the_default(tmp_path: Path) -> None:
    """Only the machine's sources count: a mirror named there is used, not deb.debian.org."""
    etc = apt_etc(tmp_path, {"debian.sources": DEBIAN_SOURCES.replace(MIRROR, "https://ftp.example.org/pub/debian")})
    assert mirror(etc) == "https://ftp.example.org/pub/debian\n"


def test_security_and_third_party_repositories_are_not_the_mirror(tmp_path: Path) -> None:
    etc = apt_etc(tmp_path, {**THIRD_PARTY, "debian.sources": DEBIAN_SOURCES})
    assert mirror(etc) == MIRROR + "\n"
    # one not tied to a keyring that names the release: used only when nothing signed by Debian's keyring is
    etc = apt_etc(tmp_path / "unsigned", {
        **THIRD_PARTY, "a-tailscale.list": "deb https://pkgs.tailscale.com/stable/debian bookworm main\n",
        "debian.sources": DEBIAN_SOURCES})
    assert mirror(etc) == MIRROR + "\n"


def test_disabled_entries_and_other_files_are_not_read(tmp_path: Path) -> None:
    etc = apt_etc(tmp_path, {
        "debian.sources": DEBIAN_SOURCES.replace("Types: deb\n", "Enabled: no\nTypes: deb\n", 1),
        "old.list.disabled": "deb http://old.example/debian bookworm main\n",
        "other.list": "deb http://other.example/debian bookworm main\n",
    })
    assert mirror(etc) == "http://other.example/debian\n"


def test_only_the_machine_s_release_counts(tmp_path: Path) -> None:
    etc = apt_etc(tmp_path, {"debian.sources": DEBIAN_SOURCES})
    assert mirror(etc, "trixie") == ""


def test_none_found_falls_back_to_deb_debian_org_and_says_so(tmp_path: Path) -> None:
    etc = apt_etc(tmp_path, dict(THIRD_PARTY))
    assert mirror(etc) == ""
    done = run("trixie_mirror", etc, "bookworm")
    assert done.stdout == "http://deb.debian.org/debian\n"
    assert "no Debian mirror" in done.stderr and str(etc) in done.stderr
    empty = run("trixie_mirror", tmp_path / "missing", "bookworm")
    assert empty.stdout == "http://deb.debian.org/debian\n" and "no Debian mirror" in empty.stderr


def test_the_mirror_found_is_logged(tmp_path: Path) -> None:
    done = run("trixie_mirror", apt_etc(tmp_path, {"debian.sources": DEBIAN_SOURCES}), "bookworm")
    assert done.stdout == MIRROR + "\n" and MIRROR in done.stderr
