//! Compaction: estimates, cut points, preparation, serialization and file lists.
