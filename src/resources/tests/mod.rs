//! Unit tests for project resources.
