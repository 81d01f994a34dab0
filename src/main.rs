fn main() {
    // glibc gives every thread that allocates its own malloc arena; pi's few threads allocate
    // little, and each extra arena's touched pages only add to the footprint. One arena, set
    // before any thread exists (thread caches keep the common path lock-free).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts allocator parameters; no thread runs yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let code = pi::cli::main();
    // No child pi started (and still owns) outlives it.
    pi::util::process::kill_all(pi::util::process::Scope::Everything);
    std::process::exit(code);
}
