//! The `banditbench` binary: everything is in the library's `cli` module.

fn main() -> std::process::ExitCode {
    banditbench::cli::main()
}
