"""`buildport migrate`: the plan, asking the build what it compiles, applying the plan, the reports."""
