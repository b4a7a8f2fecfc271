fn main() -> std::process::ExitCode {
    drover::cli::main()
}
