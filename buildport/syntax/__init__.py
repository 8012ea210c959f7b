"""Text ⇄ tree for the build languages buildport reads (lossless)."""
