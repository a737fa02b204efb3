"""Evaluation: benchmark metrics, the CSFCube pool protocol, workflow and KG metrics, the ``pilot eval`` harness."""
