//! `warpscope`: with no subcommand, opens the explorer window; `list`, `report`, … work
//! headless (see `warpscope --help`).

fn main() -> std::process::ExitCode {
    warpscope::gui::mark_process_start();
    warpscope::cli::main()
}
