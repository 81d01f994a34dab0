fn main() {
    let code = pi::cli::main();
    // No child pi started (and still owns) outlives it.
    pi::util::process::kill_all(pi::util::process::Scope::Everything);
    std::process::exit(code);
}
