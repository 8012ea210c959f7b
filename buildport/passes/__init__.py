"""Transform passes: code that reads the rule tables and records edits."""
