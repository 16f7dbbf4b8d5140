"""Support code of the tests: helpers shared by the tiers, and reference implementations."""
