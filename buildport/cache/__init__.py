"""Speed machinery: stored results, the file index, replayed runs, kept regex programs, the cache folder's files."""
