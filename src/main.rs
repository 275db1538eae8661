fn main() -> std::process::ExitCode {
    sweepgate::cli::main()
}
