fn main() {
    std::process::exit(pi::cli::main());
}
