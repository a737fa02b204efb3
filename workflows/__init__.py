"""Search workflows: typed operators wired into an explicit, editable, executable DAG."""
