"""Hosts: where the collectors run (here, or on a node over SSH)."""
