//! Unit tests for package sources, resolution and settings records.
