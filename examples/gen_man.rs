//! Prints the man page generated from the CLI flag table (`make man`).
fn main() {
    print!("{}", pi::cli::flags::man_page());
}
