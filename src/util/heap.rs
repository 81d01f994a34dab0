//! Gives the allocator's free memory back to the system. Building a request serializes the
//! whole conversation (a few transient copies the size of the session); glibc keeps such
//! freed memory mapped, so without this an idle pi's RSS is the high-water mark of its largest
//! request rather than what it holds (issue 35). Other C libraries: nothing to do.

/// Returns the free pages at the top and inside the heap to the system. Cheap next to a model
/// round trip; call it when a run ends, not per event.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}
